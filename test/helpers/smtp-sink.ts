import { SMTPServer } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'

export interface SinkMessage {
  envelopeFrom: string
  envelopeTo: string[]
  /** The name the client gave in EHLO/HELO: which sender (process) delivered the message. */
  clientName: string
  raw: string
  parsed: ParsedMail
}

export interface SmtpSink {
  url: string
  port: number
  messages: SinkMessage[]
  /** Resolves when at least n messages arrived; rejects after timeoutMs. */
  waitFor(n: number, timeoutMs?: number): Promise<SinkMessage[]>
  close(): Promise<void>
}

export interface SinkOptions {
  /** Reply code for RCPT TO per address (e.g. 550 to refuse); default accept. */
  rcptCode?: (address: string) => number | undefined
  /**
   * Holds every MAIL FROM until clients under this many distinct EHLO names have connected (at most
   * `holdTimeoutMs`, default 60 s), so several senders started together all get work before any of them
   * can finish it alone.
   */
  holdUntilClients?: number
  holdTimeoutMs?: number
  /** Milliseconds to wait before answering a message's data, by its first recipient (a slow relay). */
  dataDelayMs?: (firstRecipient: string) => number
  /** Whether a client's login (AUTH) is good; default every login is. */
  login?: (user: string, pass: string) => boolean
  /** The port to listen on (a relay that comes back where it was); default a free one. */
  port?: number
}

/** A real SMTP server on 127.0.0.1 that keeps every message it accepts, parsed. */
export async function startSmtpSink(opts: SinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = []
  const waiters: (() => void)[] = []
  const clients = new Set<string>()
  const held: (() => void)[] = []
  let holdFor = opts.holdUntilClients
  const releaseHeld = () => held.splice(0).forEach((go) => go())
  const holdTimer =
    holdFor === undefined
      ? undefined
      : setTimeout(() => {
          holdFor = undefined
          releaseHeld()
        }, opts.holdTimeoutMs ?? 60_000)
  holdTimer?.unref()
  const clientName = (session: { hostNameAppearsAs: string | false }) => session.hostNameAppearsAs || ''
  const server = new SMTPServer({
    authOptional: true,
    // Loopback only: a login in the clear is what the relay-failure tests need to refuse.
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // Pooled client connections may still be open when a test ends; do not wait 30 s for them.
    closeTimeout: 500,
    onAuth(auth, _session, cb) {
      if (opts.login && !opts.login(auth.username ?? '', auth.password ?? ''))
        return cb(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }))
      cb(null, { user: auth.username })
    },
    onMailFrom(_address, session, cb) {
      clients.add(clientName(session))
      if (holdFor === undefined || clients.size >= holdFor) {
        holdFor = undefined
        clearTimeout(holdTimer)
        releaseHeld()
        return cb()
      }
      held.push(() => cb())
    },
    onRcptTo(address, _session, cb) {
      const code = opts.rcptCode?.(address.address)
      if (code && code >= 400) {
        const err = Object.assign(new Error(`${code} refused by test sink`), { responseCode: code })
        return cb(err)
      }
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', async () => {
        const delay = opts.dataDelayMs?.(session.envelope.rcptTo[0]?.address ?? '') ?? 0
        if (delay > 0) await new Promise((r) => setTimeout(r, delay))
        const raw = Buffer.concat(chunks).toString('utf8')
        simpleParser(raw).then(
          (parsed) => {
            messages.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              clientName: clientName(session),
              raw,
              parsed,
            })
            waiters.splice(0).forEach((w) => w())
            cb()
          },
          (err: Error) => cb(err),
        )
      })
    },
  })
  // A client that dies mid-session (a killed worker) resets its connection; that is its business, not a failure.
  server.on('error', () => undefined)
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  const sink: SmtpSink = {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (messages.length < n) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`SMTP sink: expected ${n} messages, got ${messages.length}`)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 200))
          waiters.push(() => {
            clearTimeout(t)
            resolve()
          })
        })
      }
      return messages
    },
    close: () => {
      clearTimeout(holdTimer)
      releaseHeld()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  after(() => sink.close())
  return sink
}
