import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'

export interface Received {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: string
}

/** What the receiver answers to one request: a status (and headers), or nothing at all. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang'

export interface WebhookReceiver {
  /** Full URL of a path on the receiver. */
  url(path: string): string
  received: Received[]
  /** Answers for `path`, in order; the last one repeats. Unscripted paths answer 200. */
  script(path: string, answers: Answer[]): void
  /** Resolves once `n` requests reached `path` (all paths when omitted); bounded by timeoutMs. */
  waitFor(n: number, path?: string, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** A real HTTP receiver on 127.0.0.1 that records every request and answers as scripted. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = []
  const scripts = new Map<string, Answer[]>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      received.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      })
      const queue = scripts.get(path)
      const answer: Answer = (queue && queue.length > 1 ? queue.shift() : queue?.[0]) ?? { status: 200 }
      if (answer === 'hang') return
      res.writeHead(answer.status, answer.headers).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let closed = false
  const receiver: WebhookReceiver = {
    url: (path) => `${base}${path}`,
    received,
    script: (path, answers) => void scripts.set(path, [...answers]),
    async waitFor(n, path, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const hits = received.filter((r) => path === undefined || r.path === path)
        if (hits.length >= n) return hits
        if (Date.now() > deadline) throw new Error(`only ${hits.length} of ${n} requests arrived`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    async close() {
      if (closed) return
      closed = true
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  after(() => receiver.close())
  return receiver
}
