import http from 'node:http'
import https from 'node:https'
import { Transform, type Readable } from 'node:stream'
import { OutboundError, outboundDialer, type OutboundHttpOptions } from './outbound.js'

/**
 * The streaming side of the one outbound client (outbound.ts): for downloads too big to hold in memory
 * (product feeds). Same rules — http(s) only, no credentials, no redirects, the address rule applied inside
 * the socket's own lookup — but the answer's body is handed over as a stream. The time limit covers the
 * whole exchange including the reading of the body by the caller; past it, or past `maxBytes`, the body
 * stream fails with an OutboundError (`timeout`, `too_large`), so a consumer reading it with `for await`
 * sees the error where it reads.
 */

export interface StreamRequest {
  url: string
  headers?: Record<string, string>
  timeoutMs: number
  maxBytes: number
}

export interface StreamResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Readable
  /** Ends the exchange: stops the timer and drops the connection if the body was not read to its end. */
  close(): void
}

export interface OutboundStreamer {
  open(req: StreamRequest): Promise<StreamResponse>
}

export function createOutboundStreamer(opts: OutboundHttpOptions): OutboundStreamer {
  const { lookup, agents, userAgent, target } = outboundDialer(opts)

  return {
    open(r) {
      const url = target(r.url)
      if (url instanceof OutboundError) return Promise.reject(url)
      const secure = url.protocol === 'https:'
      const send = secure ? https.request : http.request

      return new Promise<StreamResponse>((resolve, reject) => {
        let answered = false
        let body: Transform | undefined
        const req = send(url, {
          method: 'GET',
          headers: { 'user-agent': userAgent, 'accept-encoding': 'identity', ...r.headers },
          agent: secure ? agents['https:'] : agents['http:'],
          lookup,
        })
        const fail = (err: OutboundError) => {
          clearTimeout(timer)
          if (!answered) {
            answered = true
            reject(err)
          }
          // Before the answer: the request fails the promise; after it: the body stream carries the error.
          body?.destroy(err)
          req.destroy()
        }
        const timer = setTimeout(
          () => fail(new OutboundError('timeout', `no complete answer within ${r.timeoutMs} ms`)),
          r.timeoutMs,
        )
        req.on('error', (err) =>
          fail(err instanceof OutboundError ? err : new OutboundError('network', err.message)),
        )
        req.on('response', (res) => {
          let size = 0
          const limiter = new Transform({
            transform(chunk: Buffer, _enc, done) {
              size += chunk.length
              if (size > r.maxBytes)
                done(new OutboundError('too_large', `the answer is larger than ${r.maxBytes} bytes`))
              else done(null, chunk)
            },
          })
          body = limiter
          // pipe, not pipeline: pipeline would hand the consumer the socket's raw error first; here every
          // failure reaches the body as an OutboundError.
          res.pipe(limiter)
          const dropped = () => fail(new OutboundError('network', 'the connection closed mid-answer'))
          res.on('error', dropped)
          res.on('close', () => {
            if (!res.complete) dropped()
          })
          res.on('end', () => clearTimeout(timer))
          limiter.on('error', () => {
            clearTimeout(timer)
            req.destroy()
          })
          answered = true
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: limiter,
            close() {
              clearTimeout(timer)
              if (!res.complete) req.destroy()
            },
          })
        })
        req.end()
      })
    },
  }
}
