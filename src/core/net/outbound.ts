import dns from 'node:dns'
import http, { type IncomingHttpHeaders } from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { forbiddenAddressReason } from './address-policy.js'
import { forbiddenHostReason, parseOutboundUrl } from './outbound-url.js'

/**
 * The one HTTP client for URLs a customer gives us (webhooks, feed downloads). It refuses non-http(s) URLs
 * and URLs with credentials, never follows redirects (a 3xx is handed back as it is), stops after
 * `timeoutMs` for the whole exchange, reads at most `maxResponseBytes`, and refuses loopback, private,
 * link-local, multicast and metadata addresses. The address rule is applied inside the socket's own name
 * lookup, to the very addresses the socket then dials, so a name that resolves to a public address when
 * checked and to a private one when dialled (DNS rebinding) cannot get through. `allowPrivateNetwork`
 * (ALLOW_PRIVATE_NETWORK=1) lifts the address rule for self-hosters and tests.
 */

export interface ResolvedAddress {
  address: string
  family: number
}

/** Name resolution: every address of a host name. Tests stub it to prove refusals without any network. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true })

export interface OutboundHttpOptions {
  allowPrivateNetwork: boolean
  resolve?: Resolver
  userAgent?: string
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'
  url: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** For the whole exchange: connecting, sending, and reading the answer. */
  timeoutMs: number
  /** The answer is cut (and `truncated` set) past this many bytes. */
  maxResponseBytes: number
  signal?: AbortSignal
}

export interface OutboundResponse {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
  truncated: boolean
}

export type OutboundErrorCode =
  | 'invalid_url'
  | 'forbidden_address'
  | 'timeout'
  | 'network'
  | 'aborted'
  /** Only from a streamed download (outbound-stream.ts): the body grew past its limit. */
  | 'too_large'

/** Every failure of an outbound request; the message names no URL, header or body, so it can be logged. */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'OutboundError'
  }
}

export interface OutboundHttp {
  request(req: OutboundRequest): Promise<OutboundResponse>
}

/** A socket lookup that resolves through `resolve` and refuses the name when any address is forbidden. */
export function checkedLookup(resolve: Resolver, allowPrivateNetwork: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((all) => {
        if (!allowPrivateNetwork) {
          // One forbidden address condemns the name: a host that also points inside is not a public host.
          for (const a of all) {
            const why = forbiddenAddressReason(a.address)
            if (why) throw new OutboundError('forbidden_address', `the host resolves to a ${why} address`)
          }
        }
        const family: unknown = options.family
        const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0
        const usable = wanted ? all.filter((a) => a.family === wanted) : all
        if (usable.length === 0) throw new OutboundError('network', 'the host has no address')
        return usable
      })
      // Two-argument then: an exception inside the socket's callback must not call it a second time.
      .then(
        (usable) => {
          const first = usable[0]!
          if (options.all) callback(null, usable)
          else callback(null, first.address, first.family)
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      )
  }
}

/**
 * What every outbound client (this one, and the streaming one of outbound-stream.ts) dials with: the checked
 * lookup, agents of its own, the user agent, and the check of a URL before any socket opens.
 */
export function outboundDialer(opts: OutboundHttpOptions) {
  const lookup = checkedLookup(opts.resolve ?? systemResolver, opts.allowPrivateNetwork)
  // Own agents without keep-alive: no socket is ever shared with code that dialled without the check.
  const agents = {
    'http:': new http.Agent({ keepAlive: false, lookup }),
    'https:': new https.Agent({ keepAlive: false, lookup }),
  }
  return {
    lookup,
    agents,
    userAgent: opts.userAgent ?? 'Tidings',
    /** The URL to dial, or why it may not be. */
    target(raw: string): URL | OutboundError {
      const parsed = parseOutboundUrl(raw)
      if ('error' in parsed) return new OutboundError('invalid_url', parsed.error)
      if (!opts.allowPrivateNetwork) {
        // An IP literal never goes through the lookup, so it is judged here.
        const why = forbiddenHostReason(parsed.url)
        if (why) return new OutboundError('forbidden_address', `the host is a ${why} address`)
      }
      return parsed.url
    },
  }
}

export function createOutboundHttp(opts: OutboundHttpOptions): OutboundHttp {
  const { lookup, agents, userAgent, target } = outboundDialer(opts)

  return {
    request(r) {
      const url = target(r.url)
      if (url instanceof OutboundError) return Promise.reject(url)
      const body = r.body === undefined ? undefined : Buffer.from(r.body)
      const headers: Record<string, string> = { 'user-agent': userAgent, ...r.headers }
      if (body) headers['content-length'] = String(body.length)
      const secure = url.protocol === 'https:'
      const send = secure ? https.request : http.request

      return new Promise<OutboundResponse>((resolve, reject) => {
        let settled = false
        const req = send(url, {
          method: r.method ?? (body ? 'POST' : 'GET'),
          headers,
          agent: secure ? agents['https:'] : agents['http:'],
          lookup,
        })
        const timer = setTimeout(
          () => fail(new OutboundError('timeout', `no complete answer within ${r.timeoutMs} ms`)),
          r.timeoutMs,
        )
        const onAbort = () => fail(new OutboundError('aborted', 'the request was aborted'))
        r.signal?.addEventListener('abort', onAbort, { once: true })
        const settle = () => {
          settled = true
          clearTimeout(timer)
          r.signal?.removeEventListener('abort', onAbort)
        }
        function fail(err: OutboundError) {
          if (!settled) {
            settle()
            reject(err)
          }
          req.destroy()
        }
        req.on('error', (err) =>
          fail(err instanceof OutboundError ? err : new OutboundError('network', err.message)),
        )
        req.on('response', (res) => {
          const chunks: Buffer[] = []
          let size = 0
          let truncated = false
          const finish = () => {
            if (settled) return
            settle()
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
              truncated,
            })
          }
          res.on('data', (chunk: Buffer) => {
            if (truncated) return
            const room = r.maxResponseBytes - size
            if (chunk.length <= room) {
              chunks.push(chunk)
              size += chunk.length
              return
            }
            chunks.push(chunk.subarray(0, room))
            truncated = true
            finish()
            res.destroy()
          })
          res.on('end', finish)
          res.on('error', (err) => fail(new OutboundError('network', err.message)))
          res.on('close', () => {
            if (!res.complete) fail(new OutboundError('network', 'the connection closed mid-answer'))
          })
        })
        if (r.signal?.aborted) onAbort()
        else req.end(body)
      })
    },
  }
}
