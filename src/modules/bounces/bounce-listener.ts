import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import type { AppContext } from '../../core/context.js'
import { handleInbound, readInboundAddress, type UnsubscribeLists } from './bounce-handler.js'

/**
 * What is read of a report: its status or feedback part comes first (RFC 3464 2, RFC 5965 2), and what
 * follows, the returned original, can be as big as the mail we sent (attachments). Its rest is read and
 * dropped, so a report about a big message is taken, not refused with a 5xx its sender would not retry.
 */
const KEPT_BYTES = 5 * 1024 * 1024
/** Refused above this (552): more than any mail of ours (BODY_LIMIT_BYTES, base64) and its report. */
const MAX_MESSAGE_BYTES = 50 * 1024 * 1024
/** RFC 5321 4.5.3.1.8: at least 100 recipients must be taken; past that, 452 asks the sender to send again. */
const MAX_RECIPIENTS = 100
/** A client that went away mid-session: its own business, not an error of ours. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'])

/**
 * The BOUNCE_SMTP_PORT listener: takes DSNs and ARF reports sent to VERP return paths, postmaster or abuse,
 * and mailto unsubscribes (readInboundAddress). Any other recipient is refused at RCPT (550), so it is no relay
 * and no mailbox for strangers; what reaches postmaster or abuse changes something only when it names one of
 * our messages by a signed return path.
 */
export async function startBounceListener(
  ctx: AppContext,
  port: number,
  unsubscribeLists: UnsubscribeLists,
  host = ctx.config.host,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    banner: 'Tidings bounce listener',
    size: MAX_MESSAGE_BYTES,
    closeTimeout: 2000,
    onRcptTo(address, session, cb) {
      if (!readInboundAddress(ctx, address.address))
        return cb(Object.assign(new Error('No such recipient here'), { responseCode: 550 }))
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS)
        return cb(Object.assign(new Error('Too many recipients'), { responseCode: 452 }))
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      let received = 0
      stream.on('data', (c: Buffer) => {
        if (received < KEPT_BYTES)
          chunks.push(received + c.length > KEPT_BYTES ? c.subarray(0, KEPT_BYTES - received) : c)
        received += c.length
      })
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          return cb(Object.assign(new Error('Message too large'), { responseCode: 552 }))
        }
        const raw = Buffer.concat(chunks)
        // The recipients of this transaction only: smtp-server empties the envelope at RSET and at each MAIL
        // FROM, so those of one refused or abandoned before it (another account's, maybe) are not in it.
        const targets = session.envelope.rcptTo.flatMap((a) => readInboundAddress(ctx, a.address) ?? [])
        handleInbound(ctx, targets, raw, unsubscribeLists).then(
          (outcomes) => {
            // A status part past the cut is lost with the rest: at least the log can tell.
            if (received > KEPT_BYTES)
              ctx.log.info(
                { bytes: received, outcomes },
                'bounce listener: a report read in part (first 5 MB)',
              )
            cb()
          },
          (err: unknown) => {
            ctx.log.error({ err }, 'bounce handling failed')
            cb(Object.assign(new Error('Try again later'), { responseCode: 451 }))
          },
        )
      })
    },
  })
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code && CLIENT_GONE.has(err.code)) ctx.log.debug({ err }, 'bounce listener: client went away')
    else ctx.log.error({ err }, 'bounce listener error')
  })
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const bound = (server.server.address() as AddressInfo).port
  ctx.log.info({ port: bound }, 'bounce listener started')
  return { port: bound, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
