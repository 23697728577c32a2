import type { Envelope, SendResult } from './mailer.js'
import { NotSentError, openSmtpSession, type SmtpSession } from './smtp-session.js'

/** Sessions a message may be handed to when the ones before ended before offering it. */
const MAX_ATTEMPTS = 3

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
 * (measured, docs/benchmarks-history.md). Errors carry `responseCode`, `code` and `response` as nodemailer's
 * do, so the caller classifies them as it does for the mailer's. Each session queues the messages given to it
 * and writes the next one's envelope behind the message in hand; a message goes to the session with the
 * shortest queue, a new one while there is room. A session the server refused a message on is reset and kept;
 * one that failed any other way is dropped, its messages not yet offered go to another, and a later send
 * opens a new one.
 */
export function createRawSmtpPool(opts: RawPoolOptions) {
  const sessions: SmtpSession[] = []
  const connecting: Promise<SmtpSession>[] = []
  let closed = false

  function connect(): Promise<SmtpSession> {
    const opening = openSmtpSession(opts).then((c) => {
      sessions.push(c)
      // A session that ends (the server's idle time-out, a broken connection) leaves the pool.
      c.onEnd(() => {
        const i = sessions.indexOf(c)
        if (i >= 0) sessions.splice(i, 1)
      })
      return c
    })
    connecting.push(opening)
    const done = () => connecting.splice(connecting.indexOf(opening), 1)
    opening.then(done, done)
    return opening
  }

  /** The session with the shortest queue; a new one while that queue is not empty and there is room. */
  function pick(): Promise<SmtpSession> {
    let best: SmtpSession | undefined
    for (const c of sessions) if (c.usable && (!best || c.pending < best.pending)) best = c
    if (best && best.pending === 0) return Promise.resolve(best)
    if (sessions.length + connecting.length < opts.maxConnections) return connect()
    if (best) return Promise.resolve(best)
    return connecting[0] ?? connect()
  }

  return {
    async send(envelope: Envelope, raw: Buffer, messageId: string, dataSafe = false): Promise<SendResult> {
      // A message a session never offered (it ended first) goes out over another, a bounded number of times.
      for (let attempt = 1; ; attempt++) {
        if (closed) throw new Error('the SMTP pool is closed')
        const c = await pick()
        try {
          const info = await c.send(envelope.from, envelope.to, raw, dataSafe)
          return { messageId, accepted: info.accepted, rejected: info.rejected }
        } catch (err) {
          if (err instanceof NotSentError && attempt < MAX_ATTEMPTS) continue
          throw err instanceof NotSentError ? (err.reason ?? err) : err
        }
      }
    },
    async close(): Promise<void> {
      closed = true
      for (const c of sessions.splice(0)) c.quit()
    },
  }
}
