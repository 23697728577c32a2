import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import type { AppContext } from '../../core/context.js'
import {
  handleInbound,
  readInboundAddress,
  type InboundTarget,
  type UnsubscribeLists,
} from './bounce-handler.js'

/** Reports are small; a returned original with attachments is cut off by this limit, which is refused. */
const MAX_MESSAGE_BYTES = 5 * 1024 * 1024
/** RFC 5321 4.5.3.1.8: at least 100 recipients must be taken; past that, 452 asks the sender to send again. */
const MAX_RECIPIENTS = 100

declare module 'smtp-server' {
  interface SMTPServerSession {
    targets?: InboundTarget[]
  }
}

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
      const target = readInboundAddress(ctx, address.address)
      if (!target) return cb(Object.assign(new Error('No such recipient here'), { responseCode: 550 }))
      const targets = (session.targets ??= [])
      if (targets.length >= MAX_RECIPIENTS)
        return cb(Object.assign(new Error('Too many recipients'), { responseCode: 452 }))
      targets.push(target)
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          return cb(Object.assign(new Error('Message too large'), { responseCode: 552 }))
        }
        const raw = Buffer.concat(chunks)
        const targets = session.targets ?? []
        session.targets = []
        handleInbound(ctx, targets, raw, unsubscribeLists).then(
          () => cb(),
          (err: unknown) => {
            ctx.log.error({ err }, 'bounce handling failed')
            cb(Object.assign(new Error('Try again later'), { responseCode: 451 }))
          },
        )
      })
    },
  })
  server.on('error', (err) => ctx.log.error({ err }, 'bounce listener error'))
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const bound = (server.server.address() as AddressInfo).port
  ctx.log.info({ port: bound }, 'bounce listener started')
  return { port: bound, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
