import net from 'node:net'
import os from 'node:os'
import tls from 'node:tls'

/**
 * One SMTP client session for messages that are already built and signed (campaign mail): EHLO, opportunistic
 * STARTTLS, AUTH PLAIN or LOGIN, then transactions. With PIPELINING (RFC 2920) a transaction is two writes:
 * MAIL FROM, every RCPT TO and DATA in one, the dot-stuffed message and its terminating dot in the other.
 *
 * Why not nodemailer's SMTPConnection, which this replaced for campaign mail: it writes each command on its own
 * and pushes the message through a stream that looks at it byte by byte in JavaScript (for dot-stuffing and
 * line ends); on a campaign that was about a third of the main thread's time (profiled,
 * docs/benchmarks-history.md). Here the dots are found with Buffer.indexOf, and messages whose line ends are
 * all CRLF (ours always are) are sent as they are. Errors carry what nodemailer's do (`code`, `responseCode`,
 * `response`, `command`), so callers classify them the same way.
 */
export interface SmtpSessionOptions {
  host: string
  port: number
  /** TLS from the start (smtps); otherwise STARTTLS when the server offers it. */
  secure: boolean
  auth?: { user: string; pass: string } | undefined
  rejectUnauthorized: boolean
  /** Host name given in EHLO; this machine's host name when undefined. */
  name?: string | undefined
  /** A session silent this long (waiting for a reply, or idle in a pool) is closed. */
  timeoutMs?: number
}

export type SmtpErrorCode = 'ECONNECTION' | 'ETIMEDOUT' | 'EPROTOCOL' | 'EAUTH' | 'EENVELOPE' | 'EMESSAGE'

export class SmtpError extends Error {
  readonly responseCode?: number
  constructor(
    message: string,
    readonly code: SmtpErrorCode,
    readonly response?: string,
    readonly command?: string,
  ) {
    super(response ? `${message}: ${response}` : message)
    const n = response ? Number(response.slice(0, 3)) : NaN
    if (Number.isInteger(n)) this.responseCode = n
  }
}

/** The session ended before the message was offered: it can go out over another session. */
export class NotSentError extends Error {
  constructor(readonly reason: Error | undefined) {
    super(`not sent: ${reason?.message ?? 'the session ended'}`)
  }
}

const NON_ASCII = /[^\x00-\x7f]/
const isAscii = (s: string) => !NON_ASCII.test(s)

interface Reply {
  code: number
  /** The whole reply, lines joined by newlines, as nodemailer gives it. */
  text: string
}

export interface SmtpSession {
  /**
   * Sends one message, queued behind the session's others; resolves with the recipients the server took,
   * rejects when it took none or refused the message (the session goes on), or with NotSentError when the
   * session ended before offering it.
   */
  send(
    from: string,
    to: readonly string[],
    message: Buffer,
    /** The message needs no line-end rewriting or dot-stuffing (dataOf). */
    dataSafe?: boolean,
  ): Promise<{ accepted: string[]; rejected: string[] }>
  /** Messages queued or in flight. */
  readonly pending: number
  /** Still open, and not in the middle of a broken exchange. */
  readonly usable: boolean
  /** QUIT and close. */
  quit(): void
  /** Called once when the session ends, for whatever reason. */
  onEnd(listener: () => void): void
}

const END_AFTER_CRLF = Buffer.from('.\r\n')
const END = Buffer.from('\r\n.\r\n')
const ignore = () => undefined

const endsWithCrlf = (m: Buffer) => m.length >= 2 && m[m.length - 2] === 13 && m[m.length - 1] === 10

/** True when every line end in the message is CRLF (no bare CR or LF): it can go out without rewriting. */
function crlfOnly(m: Buffer): boolean {
  for (let i = m.indexOf(10); i >= 0; i = m.indexOf(10, i + 1)) if (i === 0 || m[i - 1] !== 13) return false
  for (let i = m.indexOf(13); i >= 0; i = m.indexOf(13, i + 1)) if (m[i + 1] !== 10) return false
  return true
}

/** Line ends made CRLF (a bare CR or LF is one line end), as RFC 5321 §2.3.8 wants and relays expect. */
function toCrlf(m: Buffer): Buffer {
  return Buffer.from(m.toString('latin1').replace(/\r\n|\r|\n/g, '\r\n'), 'latin1')
}

/**
 * The DATA of a message: CRLF line ends, a dot that starts a line doubled (RFC 5321 §4.5.2), and the closing
 * `CRLF . CRLF`. Pieces of the message, not a copy, when it needs no stuffing. `safe`: the message's maker
 * vouches that its line ends are all CRLF and no line starts with a dot (raw-message.ts), so it goes as it is,
 * without the two scans of every message (profiled: about a fifth of the main thread's time in a campaign).
 */
export function dataOf(message: Buffer, safe = false): Buffer[] {
  if (safe && endsWithCrlf(message)) return [message, END_AFTER_CRLF]
  const m = crlfOnly(message) ? message : toCrlf(message)
  const out: Buffer[] = []
  let from = 0
  if (m[0] === 0x2e) {
    out.push(Buffer.from('.'))
  }
  for (let i = m.indexOf('\n.'); i >= 0; i = m.indexOf('\n.', i + 2)) {
    out.push(m.subarray(from, i + 1), Buffer.from('.'))
    from = i + 1
  }
  out.push(from === 0 ? m : m.subarray(from))
  out.push(endsWithCrlf(m) ? END_AFTER_CRLF : m.length === 0 ? END.subarray(2) : END)
  return out
}

export function openSmtpSession(opts: SmtpSessionOptions): Promise<SmtpSession> {
  const timeoutMs = opts.timeoutMs ?? 120_000
  return new Promise<SmtpSession>((resolve, reject) => {
    let socket: net.Socket = opts.secure
      ? tls.connect({
          host: opts.host,
          port: opts.port,
          servername: net.isIP(opts.host) ? undefined : opts.host,
          rejectUnauthorized: opts.rejectUnauthorized,
        })
      : net.connect({ host: opts.host, port: opts.port })
    socket.setNoDelay(true)
    let buffered = ''
    let lines: string[] = []
    const waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = []
    let failure: Error | undefined
    let ended = false
    let broken = false
    const endListeners: (() => void)[] = []

    const end = (err: Error) => {
      if (!failure) failure = err
      for (const w of waiting.splice(0)) w.reject(failure)
      socket.destroy()
      if (!ended) {
        ended = true
        for (const l of endListeners) l()
      }
    }

    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('latin1')
      let nl: number
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl > 0 && buffered.charCodeAt(nl - 1) === 13 ? nl - 1 : nl)
        buffered = buffered.slice(nl + 1)
        // The last line of a reply has a space (or nothing) after its code; the others a hyphen.
        if (line.length > 3 && line[3] === '-') {
          lines.push(line)
          continue
        }
        // Most replies are one line: no array to join for them (four replies a message; allocation profile).
        let text = line
        if (lines.length) {
          lines.push(line)
          text = lines.join('\n')
          lines = []
        }
        const code = Number(line.slice(0, 3))
        const w = waiting.shift()
        if (!w) {
          // Unasked: a 421 before closing an idle session, or a server out of step with us.
          return end(new SmtpError('Unexpected reply from the server', 'EPROTOCOL', text))
        }
        if (!Number.isInteger(code)) {
          w.reject(new SmtpError('Invalid reply from the server', 'EPROTOCOL', text))
          return end(new SmtpError('Invalid reply from the server', 'EPROTOCOL', text))
        }
        w.resolve({ code, text })
      }
    }

    const attach = (s: net.Socket) => {
      s.on('data', onData)
      s.on('error', (err) => end(err))
      s.on('close', () => end(new SmtpError('Connection closed', 'ECONNECTION')))
      s.setTimeout(timeoutMs, () => end(new SmtpError('Timeout', 'ETIMEDOUT')))
    }
    attach(socket)

    const reply = () =>
      new Promise<Reply>((res, rej) => {
        if (failure) return rej(failure)
        waiting.push({ resolve: res, reject: rej })
      })
    const command = async (line: string): Promise<Reply> => {
      const r = reply()
      socket.write(`${line}\r\n`)
      return r
    }

    const greet = async (): Promise<Set<string>> => {
      const name = opts.name ?? os.hostname()
      const ehlo = await command(`EHLO ${name}`)
      if (ehlo.code === 250)
        return new Set(
          ehlo.text
            .split('\n')
            .slice(1)
            .map((l) => l.slice(4).toUpperCase()),
        )
      const helo = await command(`HELO ${name}`)
      if (helo.code !== 250) throw new SmtpError('Invalid greeting', 'EPROTOCOL', helo.text, 'HELO')
      return new Set()
    }

    const startTls = () =>
      new Promise<void>((res, rej) => {
        socket.removeAllListeners('data')
        socket.removeAllListeners('close')
        socket.removeAllListeners('error')
        socket.setTimeout(0)
        const secured = tls.connect(
          {
            socket,
            servername: net.isIP(opts.host) ? undefined : opts.host,
            rejectUnauthorized: opts.rejectUnauthorized,
          },
          () => res(),
        )
        secured.once('error', rej)
        socket = secured
        attach(secured)
      })

    const login = async (extensions: Set<string>) => {
      const auth = opts.auth!
      const mechanisms = [...extensions].find((e) => e.startsWith('AUTH ') || e.startsWith('AUTH='))
      const offered = mechanisms ? mechanisms.slice(5).split(/\s+/) : []
      let r: Reply
      if (offered.includes('LOGIN') && !offered.includes('PLAIN')) {
        r = await command('AUTH LOGIN')
        if (r.code === 334) r = await command(Buffer.from(auth.user).toString('base64'))
        if (r.code === 334) r = await command(Buffer.from(auth.pass).toString('base64'))
      } else {
        r = await command(
          `AUTH PLAIN ${Buffer.from(`\u0000${auth.user}\u0000${auth.pass}`).toString('base64')}`,
        )
      }
      if (r.code !== 235) throw new SmtpError('Invalid login', 'EAUTH', r.text, 'AUTH')
    }

    interface Transaction {
      from: string
      to: readonly string[]
      message: Buffer
      dataSafe: boolean
      /**
       * RFC 6531: an address with characters beyond ASCII (the local part; domains are ASCII by isValidEmail) goes
       * only with SMTPUTF8 declared, and only to a relay that offers it. Sent bare, relays refuse it as a bad
       * address (Postfix: 553 5.6.7), which read as a hard bounce of a good address. Read once, when queued.
       */
      utf8: boolean
      resolve: (r: { accepted: string[]; rejected: string[] }) => void
      reject: (e: unknown) => void
      /** Replies to MAIL FROM, RCPT TO… and DATA, once written (ahead, with the message before it). */
      envelope?: Promise<Reply>[]
    }
    const queue: Transaction[] = []
    let busy = false

    const mailFrom = (tx: Transaction) => `MAIL FROM:<${tx.from}>${tx.utf8 ? ' SMTPUTF8' : ''}`
    const cannotCarry = (tx: Transaction) => tx.utf8 && !smtpUtf8

    /** Writes a transaction's MAIL FROM, RCPT TO and DATA in one go (PIPELINING); their replies to come. */
    const writeEnvelope = (tx: Transaction) => {
      let commands = `${mailFrom(tx)}\r\n`
      for (const t of tx.to) commands += `RCPT TO:<${t}>\r\n`
      const pending: Promise<Reply>[] = []
      // MAIL FROM, each RCPT TO, DATA. Each is awaited in turn; when the session fails, the later ones must not
      // reject unobserved.
      for (let i = 0; i < tx.to.length + 2; i++) {
        const p = reply()
        p.catch(ignore)
        pending.push(p)
      }
      socket.write(`${commands}DATA\r\n`)
      tx.envelope = pending
    }

    /** One transaction; the caller has it alone on the session. */
    const transact = async (tx: Transaction) => {
      const { to } = tx
      // Nothing written: the session stays usable for the transactions behind this one.
      if (cannotCarry(tx))
        throw new SmtpError(
          'The relay does not take addresses beyond ASCII',
          'EENVELOPE',
          '553 5.6.7 The relay does not offer SMTPUTF8, which an address beyond ASCII needs (RFC 6531)',
          // The recipient's address cannot go this way, ever: a refusal of it (a hard bounce), not the relay's failure.
          'RCPT TO',
        )
      const replies: Reply[] = []
      if (pipelining) {
        if (!tx.envelope) writeEnvelope(tx)
        for (const p of tx.envelope!) replies.push(await p)
      } else {
        // Without pipelining, one command at a time; no DATA after a refused sender or with no recipient.
        const mail = await command(mailFrom(tx))
        replies.push(mail)
        if (mail.code < 300) {
          for (const t of to) replies.push(await command(`RCPT TO:<${t}>`))
          if (replies.slice(1).some((r) => r.code < 300)) replies.push(await command('DATA'))
        }
      }
      const mail = replies[0]!
      const rcpt = replies.slice(1, 1 + to.length)
      const data = replies[1 + to.length]
      const accepted = to.filter((_, i) => rcpt[i] && rcpt[i].code < 300)
      const rejected = to.filter((_, i) => !rcpt[i] || rcpt[i].code >= 300)
      let err: SmtpError | undefined
      if (mail.code >= 300) err = new SmtpError('Mail command failed', 'EENVELOPE', mail.text, 'MAIL FROM')
      else if (accepted.length === 0) {
        const last = rcpt.filter((r) => r.code >= 300).pop()
        err = new SmtpError(
          "Can't send mail - all recipients were rejected",
          'EENVELOPE',
          last?.text,
          'RCPT TO',
        )
      } else if (!data || data.code >= 400)
        err = new SmtpError('Data command failed', 'EENVELOPE', data?.text, 'DATA')
      if (err) {
        if (data && data.code >= 300 && data.code < 400) {
          // The server took DATA though the transaction has nobody to go to: end it with an empty message.
          const r = reply()
          socket.write('.\r\n')
          await r
        } else {
          // A sender or recipients the server took stay in its transaction: reset it for the next one.
          const r = await command('RSET')
          if (r.code !== 250) throw new SmtpError('Could not reset the session', 'EPROTOCOL', r.text, 'RSET')
        }
        throw err
      }
      const done = reply()
      socket.cork()
      for (const piece of dataOf(tx.message, tx.dataSafe)) socket.write(piece)
      // RFC 2920 §3.1: message content may open a group; the next transaction's commands follow it in the same
      // write, halving the writes (and the relay's reads) per message.
      const next = queue[0]
      if (pipelining && next && !cannotCarry(next)) writeEnvelope(next)
      socket.uncork()
      const r = await done
      if (r.code >= 300) throw new SmtpError('Message failed', 'EMESSAGE', r.text, 'DATA')
      return { accepted, rejected }
    }

    /** Runs the queued transactions in order; a session that ends hands the unsent ones back (NotSentError). */
    const drain = async () => {
      busy = true
      while (queue.length) {
        const tx = queue.shift()!
        if (ended && !tx.envelope) {
          tx.reject(new NotSentError(failure))
          continue
        }
        try {
          tx.resolve(await transact(tx))
        } catch (e) {
          // An error the server did not answer with leaves replies in flight: the session is done.
          if (!(e instanceof SmtpError && (e.code === 'EENVELOPE' || e.code === 'EMESSAGE')))
            end(e instanceof Error ? e : new Error(String(e)))
          tx.reject(e)
        }
      }
      busy = false
    }

    let pipelining = false
    let smtpUtf8 = false
    const session: SmtpSession = {
      get usable() {
        return !ended && !broken
      },
      get pending() {
        return queue.length + (busy ? 1 : 0)
      },
      send(from, to, message, dataSafe = false) {
        return new Promise((resolve, reject) => {
          const utf8 = !isAscii(from) || to.some((t) => !isAscii(t))
          queue.push({ from, to, message, dataSafe, utf8, resolve, reject })
          if (!busy) void drain()
        })
      },
      quit() {
        if (ended) return
        const r = reply()
        r.then(
          () => socket.end(),
          () => undefined,
        )
        socket.write('QUIT\r\n')
        broken = true
        socket.setTimeout(1000)
      },
      onEnd(listener) {
        if (ended) listener()
        else endListeners.push(listener)
      },
    }

    void (async () => {
      const greeting = await reply()
      if (greeting.code !== 220) throw new SmtpError('Invalid greeting', 'EPROTOCOL', greeting.text)
      let extensions = await greet()
      if (!opts.secure && extensions.has('STARTTLS')) {
        const r = await command('STARTTLS')
        if (r.code !== 220) throw new SmtpError('STARTTLS failed', 'EPROTOCOL', r.text, 'STARTTLS')
        await startTls()
        extensions = await greet()
      }
      if (opts.auth) await login(extensions)
      pipelining = extensions.has('PIPELINING')
      smtpUtf8 = extensions.has('SMTPUTF8')
      return session
    })().then(resolve, (err: unknown) => {
      const e = err instanceof Error ? err : new Error(String(err))
      end(e)
      reject(e)
    })
  })
}
