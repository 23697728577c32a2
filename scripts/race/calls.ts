import { API_PORTS, KEY, REQUEST_TIMEOUT_MS } from './settings.js'

// Every call of a run, recorded by kind and status: totals, latencies, 5xx and one 4xx example each.
export type StatusKey = number | 'timeout' | 'neterr'
export const totals = new Map<string, Map<StatusKey, number>>()
export const latency = new Map<string, { n: number; sum: number; max: number; slow: number }>()
export interface FiveXX {
  method: string
  pattern: string
  status: StatusKey
  body: string
  count: number
  example: string
  kinds: Set<string>
}
export const fivexx = new Map<string, FiveXX>()
/** One example body per call kind and 4xx status, to tell validation answers from script mistakes. */
export const clientErrors = new Map<string, string>()
let portTurn = 0

export function record(kind: string, status: StatusKey, ms: number) {
  let m = totals.get(kind)
  if (!m) totals.set(kind, (m = new Map()))
  m.set(status, (m.get(status) ?? 0) + 1)
  let l = latency.get(kind)
  if (!l) latency.set(kind, (l = { n: 0, sum: 0, max: 0, slow: 0 }))
  l.n++
  l.sum += ms
  l.max = Math.max(l.max, ms)
  if (ms > 5000) l.slow++
}

/** A path with its ids, addresses and tokens replaced, for deduplication. */
export function pattern(p: string): string {
  return p
    .split('?')[0]!
    .replace(/\/(t\/o|t\/c|u|w|confirm|archive)\/[^/]+$/, '/$1/:token')
    .replace(/[^/]+@[^/]+/g, ':email')
    .replace(/\/tracker\/transaction\/o\d+/, '/tracker/transaction/:order')
    .replace(/\/domains\/[a-z0-9.-]+\.example/, '/domains/:domain')
    .replace(/\/\d+(?=\/|$)/g, '/:id')
}

export interface Res {
  status: StatusKey
  body: unknown
  text: string
}

export interface CallOpts {
  key?: string | null
  headers?: Record<string, string>
  raw?: string
  contentType?: string
  port?: number
}

/** One HTTP call to one of the API ports (alternating), recorded under `kind`. */
export async function call(
  kind: string,
  method: string,
  p: string,
  body?: unknown,
  opts: CallOpts = {},
): Promise<Res> {
  const port = opts.port ?? API_PORTS[portTurn++ % API_PORTS.length]
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.key !== null) headers.key = opts.key ?? KEY
  let payload: string | undefined
  if (opts.raw !== undefined) {
    payload = opts.raw
    headers['content-type'] = opts.contentType ?? 'application/x-www-form-urlencoded'
  } else if (body !== undefined) {
    payload = JSON.stringify(body)
    headers['content-type'] = 'application/json'
  }
  const started = Date.now()
  let res: Res
  try {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, {
      method,
      headers,
      body: payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const text = await r.text()
    let parsed: unknown = undefined
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    res = { status: r.status, body: parsed, text }
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } }
    const timeout = e.name === 'TimeoutError' || e.name === 'AbortError'
    res = {
      status: timeout ? 'timeout' : 'neterr',
      body: undefined,
      text: `${e.name}: ${e.message} ${e.cause?.code ?? ''}`,
    }
  }
  const ms = Date.now() - started
  record(kind, res.status, ms)
  if (typeof res.status === 'number' && res.status >= 400 && res.status < 500) {
    const k = `${kind} ${res.status}`
    if (!clientErrors.has(k)) clientErrors.set(k, res.text.slice(0, 160))
  }
  if (typeof res.status !== 'number' || res.status >= 500) {
    const pat = pattern(p)
    const bodyText = res.text.slice(0, 500)
    const k = `${method} ${pat} ${res.status} ${bodyText}`
    let f = fivexx.get(k)
    if (!f) {
      fivexx.set(
        k,
        (f = {
          method,
          pattern: pat,
          status: res.status,
          body: bodyText,
          count: 0,
          example: `${method} :${port}${p} ${payload ? payload.slice(0, 300) : ''}`,
          kinds: new Set(),
        }),
      )
    }
    f.count++
    f.kinds.add(kind)
  }
  return res
}

export const obj = (b: unknown): Record<string, unknown> =>
  b && typeof b === 'object' ? (b as Record<string, unknown>) : {}
