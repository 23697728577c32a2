import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js'
import type { Envelope, SendResult } from './mailer.js'

export interface RawPoolOptions {
  host: string
  port: number
  secure: boolean
  auth?: { user: string; pass: string } | undefined
  rejectUnauthorized: boolean
  maxConnections: number
  /** The host name given in EHLO; nodemailer's default (this machine's host name) when undefined. */
  name?: string | undefined
}

/** What SMTPConnection.send answers; its types leave the recipient lists out. */
interface SendInfo {
  accepted?: (string | { address: string })[]
  rejected?: (string | { address: string })[]
}

const asText = (list: SendInfo['accepted']) =>
  (list ?? []).map((a) => (typeof a === 'string' ? a : a.address))

/**
 * A pool of SMTP sessions for messages that are already built and signed (campaign mail). It speaks through
 * nodemailer's SMTPConnection (EHLO, STARTTLS, AUTH, PIPELINING, dot-stuffing, reply codes), but not
 * through its mailer: for a ready message that pipeline parses the message again, draws random boundaries
 * and runs it through several streams, about 0.5 ms of the main thread per message against 0.2 ms here
 * (measured, see README). Errors come back as SMTPConnection reports them (`responseCode`, `code`), so the
 * caller classifies them as it does for the mailer's. A session the server refused a message on is reset and
 * kept; one that failed any other way is dropped, and a later send opens a new one.
 */
export function createRawSmtpPool(opts: RawPoolOptions) {
  const idle: SMTPConnection[] = []
  const waiting: { resolve: (c: SMTPConnection) => void; reject: (err: unknown) => void }[] = []
  const open = new Set<SMTPConnection>()
  let opening = 0
  let closed = false

  function connect(): Promise<SMTPConnection> {
    opening++
    return new Promise<SMTPConnection>((resolve, reject) => {
      const c = new SMTPConnection({
        host: opts.host,
        port: opts.port,
        secure: opts.secure,
        name: opts.name,
        tls: { rejectUnauthorized: opts.rejectUnauthorized },
      })
      let settled = false
      const fail = (err: Error) => {
        open.delete(c)
        if (!settled) {
          settled = true
          reject(err)
        }
      }
      c.on('error', fail)
      // A session the server ends (idle time-out) leaves the pool; the next send opens another.
      c.on('end', () => {
        open.delete(c)
        const i = idle.indexOf(c)
        if (i >= 0) idle.splice(i, 1)
      })
      c.connect((err?: Error) => {
        if (err) return fail(err)
        const ready = () => {
          settled = true
          open.add(c)
          resolve(c)
        }
        if (!opts.auth) return ready()
        c.login(opts.auth, (loginErr?: Error | null) => {
          if (!loginErr) return ready()
          c.close()
          fail(loginErr)
        })
      })
    }).finally(() => opening--)
  }

  function acquire(): Promise<SMTPConnection> {
    const ready = idle.pop()
    if (ready) return Promise.resolve(ready)
    if (open.size + opening < opts.maxConnections) return connect()
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  }

  /** Gives a session back (or, when it is no longer usable, its place in the pool) to the next waiter. */
  function release(c: SMTPConnection): void {
    const usable = !closed && open.has(c)
    if (!usable) c.close()
    const next = waiting.shift()
    if (!next) {
      if (usable) idle.push(c)
    } else if (usable) next.resolve(c)
    else if (closed) next.reject(new Error('the SMTP pool is closed'))
    else connect().then(next.resolve, next.reject)
  }

  function drop(c: SMTPConnection): void {
    open.delete(c)
    release(c)
  }

  return {
    async send(envelope: Envelope, raw: Buffer, messageId: string): Promise<SendResult> {
      if (closed) throw new Error('the SMTP pool is closed')
      const c = await acquire()
      try {
        // SMTPConnection keeps its working state on the envelope object: each send needs its own.
        const info = await new Promise<SendInfo>((resolve, reject) =>
          c.send({ from: envelope.from, to: [...envelope.to] }, raw, (err, result) =>
            err ? reject(err) : resolve(result as SendInfo),
          ),
        )
        release(c)
        return { messageId, accepted: asText(info.accepted), rejected: asText(info.rejected) }
      } catch (err) {
        const e = err as { code?: string; responseCode?: number }
        const refusedOnly = (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== 421
        if (refusedOnly && open.has(c)) c.reset((resetErr) => (resetErr ? drop(c) : release(c)))
        else drop(c)
        throw err
      }
    },
    async close(): Promise<void> {
      closed = true
      for (const w of waiting.splice(0)) w.reject(new Error('the SMTP pool is closed'))
      for (const c of [...open]) c.quit()
      open.clear()
      idle.length = 0
    },
  }
}
