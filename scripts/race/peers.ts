import { type Server, createServer } from 'node:http'
import { type AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { PUBLIC_URL } from './settings.js'

// What the servers reach out to: an SMTP sink and a webhook receiver, counting what arrives.

export const received = { mails: 0, rcptRefused: 0, hooks: 0, pipelineHooks: 0, hookBodies: 0 }
/** Tracking, unsubscribe and web-version links found in received mail, for the tracking calls. */
export const trackingUrls: string[] = []

export function decodeQP(s: string): string {
  return s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
}
export const urlRe = new RegExp(
  `${PUBLIC_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:t/o|t/c|u|w)/[A-Za-z0-9._~%-]+`,
  'g',
)

export function startSink(): Promise<SMTPServer & { port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 50 * 1024 * 1024,
    onRcptTo(address, _session, cb) {
      if (address.address.toLowerCase().startsWith('gone')) {
        received.rcptRefused++
        const err = new Error('550 5.1.1 No such user') as Error & { responseCode: number }
        err.responseCode = 550
        return cb(err)
      }
      cb()
    },
    onData(stream, _session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        received.mails++
        const text = decodeQP(Buffer.concat(chunks).toString('latin1'))
        for (const m of text.matchAll(urlRe)) {
          trackingUrls.push(m[0])
          if (trackingUrls.length > 600) trackingUrls.splice(0, 100)
        }
        cb()
      })
      stream.on('error', () => cb())
    },
  })
  server.on('error', (err) => console.error('sink error', err.message))
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const addr = (server as unknown as { server: Server }).server.address() as AddressInfo
      resolve(Object.assign(server, { port: addr.port }))
    })
  })
}

export function startReceiver(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    let n = 0
    req.on('data', (c: Buffer) => (n += c.length))
    req.on('end', () => {
      if (req.url?.startsWith('/pipehook')) received.pipelineHooks++
      else {
        received.hooks++
        received.hookBodies += n
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"ok":true}')
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  )
}
