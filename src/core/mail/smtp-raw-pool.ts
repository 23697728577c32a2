import type { Envelope, SendResult } from './mailer.js'
import { openSmtpSession, type SmtpSession } from './smtp-session.js'

export interface RawPoolOptions {
  host: string
  port: number
  secure: boolean
  auth?: { user: string; pass: string } | undefined
  rejectUnauthorized: boolean
  maxConnections: number
  /** The host name given in EHLO; this machine's host name when undefined. */
  name?: string | undefined
}

/**
 * A pool of SMTP sessions for messages that are already built and signed (campaign mail), over smtp-session.ts
 * (EHLO, STARTTLS, AUTH, PIPELINING, dot-stuffing, reply codes) rather than nodemailer's mailer: for a ready
 * message that pipeline parses the message again, draws random boundaries and runs it through several streams
 * (measured, see README). Errors carry `responseCode`, `code` and `response` as nodemailer's do, so the caller
 * classifies them as it does for the mailer's. A session the server refused a message on is reset and kept;
 * one that failed any other way is dropped, and a later send opens a new one.
 */
export function createRawSmtpPool(opts: RawPoolOptions) {
  const idle: SmtpSession[] = []
  const waiting: { resolve: (c: SmtpSession) => void; reject: (err: unknown) => void }[] = []
  const open = new Set<SmtpSession>()
  let opening = 0
  let closed = false

  async function connect(): Promise<SmtpSession> {
    opening++
    try {
      const c = await openSmtpSession(opts)
      open.add(c)
      // A session the server ends (idle time-out) leaves the pool; the next send opens another.
      c.onEnd(() => {
        open.delete(c)
        const i = idle.indexOf(c)
        if (i >= 0) idle.splice(i, 1)
      })
      return c
    } finally {
      opening--
    }
  }

  function acquire(): Promise<SmtpSession> {
    const ready = idle.pop()
    if (ready) return Promise.resolve(ready)
    if (open.size + opening < opts.maxConnections) return connect()
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  }

  /** Gives a session back (or, when it is no longer usable, its place in the pool) to the next waiter. */
  function release(c: SmtpSession): void {
    const usable = !closed && open.has(c) && c.usable
    if (!usable) {
      open.delete(c)
      c.quit()
    }
    const next = waiting.shift()
    if (!next) {
      if (usable) idle.push(c)
    } else if (usable) next.resolve(c)
    else if (closed) next.reject(new Error('the SMTP pool is closed'))
    else connect().then(next.resolve, next.reject)
  }

  function drop(c: SmtpSession): void {
    open.delete(c)
    release(c)
  }

  return {
    async send(envelope: Envelope, raw: Buffer, messageId: string): Promise<SendResult> {
      if (closed) throw new Error('the SMTP pool is closed')
      const c = await acquire()
      try {
        const info = await c.send(envelope.from, envelope.to, raw)
        release(c)
        return { messageId, accepted: info.accepted, rejected: info.rejected }
      } catch (err) {
        const e = err as { code?: string; responseCode?: number }
        const refusedOnly = (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== 421
        if (refusedOnly && c.usable)
          c.reset().then(
            () => release(c),
            () => drop(c),
          )
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
