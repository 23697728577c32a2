/**
 * Race / stress script: several Tidings processes (ROLE=all, api, worker) on one fresh PostgreSQL database, 24
 * concurrent client loops over a small shared pool of ids and addresses, then a report of every 5xx, every
 * error-level log line, every errored (and stuck) campaign, mail received at an in-process SMTP sink and webhook
 * calls received.
 *
 *   npm run race   (builds dist/, then runs this)
 *
 * It looks for what only concurrency shows: deadlocks that outlast their retries, lost updates that break a
 * constraint, a campaign stopped by a transient error. Not part of `npm test` (it runs for minutes and its
 * traffic is random); its findings become deterministic tests. Talks to 127.0.0.1 only; the server, reached
 * as `psql -h 127.0.0.1 -U postgres` (RACE_PG_USER), must let that user create databases.
 *
 * Env: RACE_SECONDS (default 90), RACE_LOOPS (24), RACE_SETTLE_SECONDS (30: how long to wait after the traffic
 * for campaigns in status 1/2 to finish), DB_POOL_SIZE (passed on to the three server processes when set),
 * RACE_KEEP_DB=1 (do not drop the database), RACE_SEED (random seed), RACE_BULK_CONCURRENCY (at most this many
 * subscribe-bulk calls in flight at once; default 0 = no cap), RACE_FILL (contacts imported into a list no call
 * touches before the traffic, so that plans are those of a real account: with a few hundred contacts PostgreSQL
 * scans and hash-joins, and bulk writes lock in table order rather than in the order they are given).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { SMTPServer } from 'smtp-server'

// ---------------------------------------------------------------------------------------------------------------
// Configuration
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SECONDS = Number(process.env.RACE_SECONDS ?? 90)
const LOOPS = Number(process.env.RACE_LOOPS ?? 24)
const SETTLE_SECONDS = Number(process.env.RACE_SETTLE_SECONDS ?? 30)
const BULK_CONCURRENCY = Number(process.env.RACE_BULK_CONCURRENCY ?? 0)
const KEY = 'racekey-0123456789abcdef'
const ADMIN_KEY = 'adminkey-0123456789abcdef'
const PORT_ALL = 4101
const PORT_API = 4102
const PORT_WORKER = 4103
const API_PORTS = [PORT_ALL, PORT_API]
const DB = `race_${Date.now()}`
const PG_HOST = '127.0.0.1'
const PG_USER = process.env.RACE_PG_USER ?? 'postgres'
const DATABASE_URL = `postgres://${PG_USER}@${PG_HOST}:5432/${DB}`
const PUBLIC_URL = `http://127.0.0.1:${PORT_ALL}`
const DOMAIN = 'race.example'
const FROM = `news@${DOMAIN}`
const REQUEST_TIMEOUT_MS = 30_000

// Small seeded PRNG (mulberry32) so that a run can be repeated with RACE_SEED.
let seed = Number(process.env.RACE_SEED ?? Date.now() % 2 ** 31)
const SEED = seed
function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const ri = (n: number) => Math.floor(rand() * n)
const pick = <T>(xs: readonly T[]): T => xs[ri(xs.length)]!
const chance = (p: number) => rand() < p
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// Shared pools: small, so that calls collide.
const USERS = Array.from({ length: 40 }, (_, i) => `u${i}@example.cz`)
const GONE = Array.from({ length: 4 }, (_, i) => `gone${i}@example.cz`)
const EMAILS = [...USERS, ...GONE]
const BULK_EXTRA = Array.from({ length: 250 }, (_, i) => `b${i}@example.cz`)
const TAGS = ['vip', 'new', 'engaged', 'x', 'promo']
const CITIES = ['Praha', 'Brno', 'Ostrava', 'Plzen']
const SHOPS = ['shopA', 'shopB']
const ORDERS = Array.from({ length: 30 }, (_, i) => `o${i}`)
const THROWAWAY_DOMAINS = ['tmp1.example', 'tmp2.example', 'tmp3.example']
const COUPON_CODES = Array.from({ length: 60 }, (_, i) => `CODE${i}`)
const IDEMPOTENCY_KEYS = Array.from({ length: 6 }, (_, i) => `race-idem-${SEED}-${i}`)

// Id pools (mutated by the loops).
const pools = {
  lists: [] as number[],
  templates: [] as number[],
  campaigns: [] as number[],
  pipelines: [] as number[],
  folders: [] as number[],
  segments: [] as { id: string; list: number }[],
}
const POOL_MAX = { campaigns: 10, pipelines: 6, folders: 4, segments: 8 }

// ---------------------------------------------------------------------------------------------------------------
// Bookkeeping
type StatusKey = number | 'timeout' | 'neterr'
const totals = new Map<string, Map<StatusKey, number>>()
const latency = new Map<string, { n: number; sum: number; max: number; slow: number }>()
interface FiveXX {
  method: string
  pattern: string
  status: StatusKey
  body: string
  count: number
  example: string
  kinds: Set<string>
}
const fivexx = new Map<string, FiveXX>()
/** One example body per call kind and 4xx status, to tell validation answers from script mistakes. */
const clientErrors = new Map<string, string>()
const received = { mails: 0, rcptRefused: 0, hooks: 0, pipelineHooks: 0, hookBodies: 0 }
const trackingUrls: string[] = []
let portTurn = 0

function record(kind: string, status: StatusKey, ms: number) {
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
function pattern(p: string): string {
  return p
    .split('?')[0]!
    .replace(/\/(t\/o|t\/c|u|w|confirm|archive)\/[^/]+$/, '/$1/:token')
    .replace(/[^/]+@[^/]+/g, ':email')
    .replace(/\/tracker\/transaction\/o\d+/, '/tracker/transaction/:order')
    .replace(/\/domains\/[a-z0-9.-]+\.example/, '/domains/:domain')
    .replace(/\/\d+(?=\/|$)/g, '/:id')
}

interface Res {
  status: StatusKey
  body: unknown
  text: string
}

interface CallOpts {
  key?: string | null
  headers?: Record<string, string>
  raw?: string
  contentType?: string
  port?: number
}

/** One HTTP call to one of the API ports (alternating), recorded under `kind`. */
async function call(
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

const obj = (b: unknown): Record<string, unknown> =>
  b && typeof b === 'object' ? (b as Record<string, unknown>) : {}

// ---------------------------------------------------------------------------------------------------------------
// Infrastructure: SMTP sink, webhook receiver, server processes
function decodeQP(s: string): string {
  return s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
}
const urlRe = new RegExp(
  `${PUBLIC_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:t/o|t/c|u|w)/[A-Za-z0-9._~%-]+`,
  'g',
)

function startSink(): Promise<SMTPServer & { port: number }> {
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

function startReceiver(): Promise<{ server: Server; port: number }> {
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

interface Proc {
  name: string
  role: string
  port: number
  child: ChildProcess
  logFile: string
  exited?: { code: number | null; signal: NodeJS.Signals | null; at: number }
}

function startProc(name: string, role: string, port: number, dir: string, sinkPort: number): Proc {
  const logFile = path.join(dir, `${name}.log`)
  const out = createWriteStream(logFile)
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    ROLE: role,
    DATABASE_URL,
    DATA_DIR: path.join(dir, `data-${name}`),
    BOOTSTRAP_API_KEY: KEY,
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_FAILS_PER_MINUTE: '0',
    SMTP_URL: `smtp://127.0.0.1:${sinkPort}`,
    PUBLIC_URL,
    ALLOW_PRIVATE_NETWORK: '1',
    LOG_LEVEL: 'warn',
    ADMIN_KEY,
  }
  if (process.env.DB_POOL_SIZE) env.DB_POOL_SIZE = process.env.DB_POOL_SIZE
  const child = spawn(process.execPath, ['dist/main.js'], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.pipe(out, { end: false })
  child.stderr?.pipe(out, { end: false })
  const proc: Proc = { name, role, port, child, logFile }
  child.on('exit', (code, signal) => {
    proc.exited = { code, signal, at: Date.now() }
  })
  return proc
}

async function waitHttp(port: number, proc: Proc, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (proc.exited)
      throw new Error(`${proc.name} exited: ${JSON.stringify(proc.exited)}; see ${proc.logFile}`)
    try {
      const r = await fetch(`http://127.0.0.1:${port}/lists`, {
        headers: { key: KEY },
        signal: AbortSignal.timeout(2000),
      })
      if (r.status === 200) return
    } catch {
      /* not yet */
    }
    await sleep(250)
  }
  throw new Error(`${proc.name} did not answer on ${port} within ${timeoutMs} ms`)
}

async function stopProc(p: Proc) {
  if (p.exited || !p.child.pid) return
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()))
  process.kill(p.child.pid, 'SIGTERM')
  const killTimer = setTimeout(() => {
    if (!p.exited && p.child.pid) {
      console.log(`  ${p.name} (pid ${p.child.pid}) did not stop in 10 s: SIGKILL`)
      process.kill(p.child.pid, 'SIGKILL')
    }
  }, 10_000)
  await exited
  clearTimeout(killTimer)
}

// ---------------------------------------------------------------------------------------------------------------
// Request builders
const CAMPAIGN_HTML = (folder?: number) =>
  '<html><body><p>Hello *|name|*!</p>' +
  '<p><a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> <a href="https://shop.example/other">Other</a></p>' +
  (folder ? `<p>Coupon: *|COUPON:${folder}|*</p>` : '') +
  '<p><a href="*|UNSUB|*">Unsubscribe</a> <a href="*|WEBVERSION|*">Web</a></p></body></html>'

function person(email: string) {
  const p: Record<string, unknown> = { email, name: `N${ri(100)}`, city: pick(CITIES) }
  if (chance(0.7)) p.tags = TAGS.filter(() => chance(0.3))
  if (chance(0.3)) p.custom_fields = { score: ri(100), plan: pick(['a', 'b']) }
  return p
}

function bulkRows(): Record<string, unknown>[] {
  const n = 50 + ri(151)
  const rows: Record<string, unknown>[] = []
  for (let i = 0; i < n; i++) rows.push(person(chance(0.45) ? pick(EMAILS) : pick(BULK_EXTRA)))
  return rows
}

function transaction(order: string, email = pick(EMAILS)) {
  return {
    transaction: {
      order_id: order,
      email,
      shop: pick(SHOPS),
      amount: 10 + ri(500),
      tax: 5,
      shipping: 2,
      city: pick(CITIES),
      country: 'CZ',
      timestamp: Math.floor(Date.now() / 1000) - ri(86400),
    },
    transaction_items: [
      {
        code: `p${ri(10)}`,
        title: 'Thing',
        category: 'cat',
        price: 10,
        amount: 1 + ri(3),
        categories: ['a', 'b'],
      },
      { code: `p${ri(10)}`, title: 'Other', category: 'cat2', price: 20, amount: 1 },
    ],
  }
}

function utc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

function campaignBody() {
  const lists = pools.lists.filter(() => chance(0.5))
  if (lists.length === 0 && pools.lists.length) lists.push(pick(pools.lists))
  const targets = chance(0.2) && pools.segments.length ? { lists, segments: [pick(pools.segments)] } : lists
  return {
    title: `Campaign ${ri(1000)}`,
    from_name: 'Race',
    from_email: FROM,
    reply_to: `help@${DOMAIN}`,
    subject: 'Hi *|name|*',
    html_text: CAMPAIGN_HTML(chance(0.4) && pools.folders.length ? pick(pools.folders) : undefined),
    recepient_lists: targets,
  }
}

function pipelineBody(hookPort: number) {
  const trigger = pick([
    { type: 'api' },
    { type: 'api' },
    { type: 'subscribe' },
    { type: 'tag', tag: pick(TAGS) },
    { type: 'event', category: 'shop', action: 'view' },
    { type: 'purchase' },
  ])
  const template = pools.templates.length ? pick(pools.templates) : 0
  const hook = chance(0.5)
  const actions: Record<string, unknown>[] = [
    { id: 't1', type: 'tag', properties: { name: 'Tag', tag: pick(TAGS) }, next: ['w1'] },
    { id: 'w1', type: 'wait', properties: { name: 'Wait', value: 1 + ri(3), unit: 'seconds' }, next: ['m1'] },
    {
      id: 'm1',
      type: 'mail',
      properties: { name: 'Mail', template, subject: 'Auto *|name|*', from_email: FROM, from_name: 'Race' },
      next: { default: [hook ? 'h1' : 'e1'], quarantine_skip: ['e1'] },
    },
    { id: 'e1', type: 'end', properties: { name: 'End' }, next: null },
  ]
  if (hook)
    actions.push({
      id: 'h1',
      type: 'webhook',
      properties: { name: 'Hook', url: `http://127.0.0.1:${hookPort}/pipehook`, method: 'POST' },
      next: ['e1'],
    })
  return {
    name: `Flow ${ri(1000)}`,
    list_id: pick(pools.lists),
    status: 'active',
    trigger,
    reentry: pick(['once', 'repeat']),
    start: 't1',
    actions,
  }
}

function replaceIn<T>(arr: T[], oldV: T, newV: T | undefined) {
  const i = arr.indexOf(oldV)
  if (i >= 0) {
    if (newV === undefined) arr.splice(i, 1)
    else arr[i] = newV
  } else if (newV !== undefined) arr.push(newV)
}

function addCapped<T>(arr: T[], v: T, max: number) {
  if (arr.length >= max) arr[ri(arr.length)] = v
  else arr.push(v)
}

// ---------------------------------------------------------------------------------------------------------------
// The traffic mix: [kind, weight, action]
type Op = [string, number, () => Promise<unknown>]

function operations(hookPort: number): Op[] {
  const L = () => pick(pools.lists) ?? 1
  const E = () => pick(EMAILS)
  const C = () => pick(pools.campaigns) ?? 1
  const P = () => pick(pools.pipelines) ?? 1
  const T = () => pick(pools.templates) ?? 1
  const enc = encodeURIComponent
  return [
    // Subscribers
    [
      'subscribe',
      10,
      () =>
        call(
          'subscribe',
          'POST',
          `/lists/${L()}/subscribe`,
          {
            subscriber_data: person(E()),
            update_existing: true,
            resubscribe: chance(0.7),
            trigger_autoresponders: chance(0.5),
            skip_confirmation: true,
          },
          chance(0.1) ? { headers: { 'Idempotency-Key': pick(IDEMPOTENCY_KEYS) } } : {},
        ),
    ],
    [
      'subscribe-bulk',
      5,
      () =>
        call('subscribe-bulk', 'POST', `/lists/${L()}/subscribe-bulk`, {
          subscriber_data: bulkRows(),
          update_existing: true,
          resubscribe: chance(0.3),
        }),
    ],
    [
      'update-subscriber',
      5,
      () =>
        call('update-subscriber', 'PUT', `/lists/${L()}/update-subscriber`, {
          email: E(),
          subscriber_data: { name: `U${ri(100)}`, city: pick(CITIES), tags: TAGS.filter(() => chance(0.3)) },
        }),
    ],
    [
      'update-subscribers-bulk',
      4,
      () =>
        call('update-subscribers-bulk', 'PUT', `/lists/${L()}/update-subscribers-bulk`, {
          subscriber_data: Array.from({ length: 5 + ri(30) }, () => ({
            email: E(),
            name: `B${ri(100)}`,
            status: pick([1, 1, 1, 2, 4]),
            tags: TAGS.filter(() => chance(0.3)),
          })),
          allow_resubscribe: chance(0.5),
        }),
    ],
    ['unsubscribe', 4, () => call('unsubscribe', 'DELETE', `/lists/${L()}/unsubscribe`, { email: E() })],
    ['delete-subscriber', 2, () => call('delete-subscriber', 'DELETE', `/subscribers/${enc(E())}/delete`)],
    [
      'get-list-subscriber',
      4,
      () => call('get-list-subscriber', 'GET', `/lists/${L()}/subscriber/${enc(E())}`),
    ],
    ['get-subscriber', 3, () => call('get-subscriber', 'GET', `/subscribers/${enc(E())}`)],
    [
      'list-subscribers',
      3,
      () =>
        call(
          'list-subscribers',
          'GET',
          `/lists/${L()}/subscribers?page=${1 + ri(2)}&per_page=${pick([20, 50])}${chance(0.3) ? '&status=unsubscribed' : ''}`,
        ),
    ],
    ['email-log', 1, () => call('email-log', 'GET', `/subscribers/${enc(E())}/email-log`)],
    ['automation-log', 1, () => call('automation-log', 'GET', `/subscribers/${enc(E())}/automation-log`)],
    ['search', 1, () => call('search', 'GET', `/search?query=u${ri(4)}`)],
    ['get-list', 1, () => call('get-list', 'GET', `/lists/${L()}`)],
    // Purchases and tracker events
    ['transaction', 4, () => call('transaction', 'POST', '/tracker/transaction', transaction(pick(ORDERS)))],
    [
      'transaction-bulk',
      2,
      () =>
        call('transaction-bulk', 'POST', '/tracker/transaction-bulk', {
          transaction_data: Array.from({ length: 5 + ri(40) }, () => transaction(pick(ORDERS))),
        }),
    ],
    [
      'transaction-update',
      2,
      () => {
        const o = pick(ORDERS)
        return call('transaction-update', 'PUT', `/tracker/transaction/${o}`, transaction(o))
      },
    ],
    [
      'transaction-delete',
      2,
      () =>
        call(
          'transaction-delete',
          'DELETE',
          `/tracker/transaction/${pick(ORDERS)}/delete`,
          chance(0.5) ? { transaction_data: { shop: pick(SHOPS) } } : undefined,
        ),
    ],
    [
      'transaction-delete-bulk',
      1,
      () =>
        call('transaction-delete-bulk', 'DELETE', '/tracker/transaction/delete-bulk', {
          transaction_data: Array.from({ length: 3 + ri(10) }, () => ({
            order_id: pick(ORDERS),
            shop: pick(SHOPS),
          })),
        }),
    ],
    ['transaction-list', 1, () => call('transaction-list', 'GET', `/tracker/transaction?email=${enc(E())}`)],
    [
      'subscriber-transactions',
      1,
      () => call('subscriber-transactions', 'GET', `/subscribers/${enc(E())}/transactions`),
    ],
    [
      'tracker-event',
      4,
      () =>
        call('tracker-event', 'POST', '/tracker/events', {
          event: {
            email: E(),
            category: 'shop',
            action: pick(['view', 'cart']),
            label: 'p1',
            value: { x: ri(10) },
          },
        }),
    ],
    // Transactional mail
    [
      'send-message',
      4,
      () =>
        call(
          'send-message',
          'POST',
          '/transactional/send-message',
          {
            message: {
              subject: 'Order *|order|*',
              from_name: 'Race',
              from_email: FROM,
              to: Array.from({ length: 1 + ri(3) }, () => ({ email: E(), name: 'X' })),
              html:
                '<p>Thanks *|order|*</p><p><a href="https://shop.example/o">Order</a></p>' +
                (chance(0.3) && pools.folders.length ? `<p>*|COUPON:${pick(pools.folders)}|*</p>` : ''),
              global_merge_vars: [{ name: 'order', content: `o${ri(30)}` }],
              options: { click_tracking: true, open_tracking: true },
            },
          },
          chance(0.15) ? { headers: { 'Idempotency-Key': pick(IDEMPOTENCY_KEYS) } } : {},
        ),
    ],
    [
      'send-template',
      3,
      () =>
        call('send-template', 'POST', '/transactional/send-template', {
          message: {
            template_id: T(),
            subject: 'Template mail',
            from_name: 'Race',
            from_email: FROM,
            to: [{ email: E(), name: 'Y' }],
          },
        }),
    ],
    ['transactional-stats', 1, () => call('transactional-stats', 'GET', '/transactional/stats')],
    // Campaigns
    [
      'campaign-create',
      3,
      async () => {
        const r = await call('campaign-create', 'POST', '/campaigns', campaignBody())
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.campaigns, id, POOL_MAX.campaigns)
      },
    ],
    ['campaign-update', 1, () => call('campaign-update', 'PUT', `/campaigns/${C()}`, campaignBody())],
    ['campaign-send', 3, () => call('campaign-send', 'POST', `/campaigns/${C()}/send`)],
    ['campaign-pause', 2, () => call('campaign-pause', 'POST', `/campaigns/${C()}/pause`)],
    ['campaign-resume', 2, () => call('campaign-resume', 'POST', `/campaigns/${C()}/resume`)],
    ['campaign-cancel', 1, () => call('campaign-cancel', 'POST', `/campaigns/${C()}/cancel`)],
    [
      'campaign-schedule',
      2,
      () =>
        call('campaign-schedule', 'POST', `/campaigns/${C()}/schedule`, {
          scheduled_at: utc(Date.now() + (3 + ri(20)) * 1000),
        }),
    ],
    ['campaign-unschedule', 1, () => call('campaign-unschedule', 'DELETE', `/campaigns/${C()}/schedule`)],
    [
      'campaign-delete',
      1,
      async () => {
        const id = C()
        const r = await call('campaign-delete', 'DELETE', `/campaigns/${id}`)
        if (r.status === 200 || r.status === 404) replaceIn(pools.campaigns, id, undefined)
      },
    ],
    ['campaign-test', 1, () => call('campaign-test', 'POST', `/campaigns/${C()}/test`, { emails: [E()] })],
    ['campaign-get', 1, () => call('campaign-get', 'GET', `/campaigns/${C()}`)],
    ['campaign-stats', 1, () => call('campaign-stats', 'GET', `/campaigns/${C()}/stats`)],
    [
      'campaign-stats-detail',
      1,
      () => call('campaign-stats-detail', 'GET', `/campaigns/${C()}/stats-detail`),
    ],
    ['campaign-log', 1, () => call('campaign-log', 'GET', `/campaigns/${C()}/log`)],
    ['campaigns-list', 1, () => call('campaigns-list', 'GET', '/campaigns?per_page=50')],
    // Segments
    [
      'segment-create',
      1,
      async () => {
        const list = L()
        const filter = pick<unknown>([
          { tag: pick(TAGS) },
          { field: 'city', op: 'eq', value: pick(CITIES) },
          { any: [{ tag: 'vip' }, { event: { category: 'shop', action: 'view' } }] },
          { purchased: { days: 30 } },
        ])
        const r = await call('segment-create', 'POST', `/lists/${list}/segments`, {
          name: `S${ri(1000)}`,
          filter,
        })
        const id = obj(r.body).id
        if (r.status === 200 && id !== undefined)
          addCapped(pools.segments, { id: String(id), list }, POOL_MAX.segments)
      },
    ],
    ['segment-list', 1, () => call('segment-list', 'GET', `/lists/${L()}/segments`)],
    // Pipelines
    [
      'pipeline-create',
      2,
      async () => {
        const r = await call('pipeline-create', 'POST', '/pipelines', pipelineBody(hookPort))
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.pipelines, id, POOL_MAX.pipelines)
      },
    ],
    [
      'pipeline-update',
      1,
      () =>
        call(
          'pipeline-update',
          'PUT',
          `/pipelines/${P()}`,
          chance(0.5) ? { status: pick(['active', 'paused']) } : pipelineBody(hookPort),
        ),
    ],
    [
      'pipeline-trigger',
      4,
      () => call('pipeline-trigger', 'POST', `/pipelines/${P()}/trigger`, { email: E() }),
    ],
    [
      'pipeline-delete',
      1,
      async () => {
        const id = P()
        const r = await call('pipeline-delete', 'DELETE', `/pipelines/${id}`)
        if (r.status === 200 || r.status === 404) replaceIn(pools.pipelines, id, undefined)
      },
    ],
    ['pipeline-stats', 1, () => call('pipeline-stats', 'GET', `/pipelines/${P()}/stats`)],
    ['pipelines-list', 1, () => call('pipelines-list', 'GET', '/pipelines')],
    // Lists and templates deleted and recreated
    [
      'list-recreate',
      1,
      async () => {
        if (pools.lists.length < 2) return
        const id = L()
        const del = await call('list-delete', 'DELETE', `/lists/${id}`)
        if (del.status !== 200 && del.status !== 404) return
        const r = await call('list-create', 'POST', '/lists', {
          name: `List ${ri(1000)}`,
          from_name: 'Race',
          from_email: FROM,
          reply_to: `help@${DOMAIN}`,
        })
        const nid = obj(r.body).id
        replaceIn(pools.lists, id, r.status === 200 && typeof nid === 'number' ? nid : undefined)
        if (typeof nid === 'number')
          await call('subscribe-bulk', 'POST', `/lists/${nid}/subscribe-bulk`, {
            subscriber_data: EMAILS.map(person),
            update_existing: true,
          })
      },
    ],
    [
      'template-recreate',
      1,
      async () => {
        if (pools.templates.length < 2) return
        const id = T()
        const del = await call('template-delete', 'DELETE', `/templates/${id}`)
        if (del.status !== 200 && del.status !== 404) return
        const r = await call('template-create', 'POST', '/templates', {
          name: `T${ri(1000)}`,
          html: CAMPAIGN_HTML(),
          subject: 'Tmpl *|name|*',
        })
        const nid = obj(r.body).id
        replaceIn(pools.templates, id, r.status === 200 && typeof nid === 'number' ? nid : undefined)
      },
    ],
    [
      'template-update',
      1,
      () =>
        call('template-update', 'PUT', `/templates/${T()}`, { name: `T${ri(1000)}`, html: CAMPAIGN_HTML() }),
    ],
    // Coupons
    [
      'coupon-folder',
      1,
      async () => {
        const r = await call('coupon-folder', 'POST', '/coupons/folders', { name: `F${ri(5)}` })
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.folders, id, POOL_MAX.folders)
      },
    ],
    [
      'coupon-import',
      2,
      () =>
        call('coupon-import', 'POST', '/coupons/import', {
          ...(pools.folders.length && chance(0.8) ? { folderId: pick(pools.folders) } : {}),
          codes: Array.from({ length: 5 + ri(20) }, () => pick(COUPON_CODES)),
          valid_until: chance(0.5) ? '2099-01-01' : undefined,
          update_existing: chance(0.5),
        }),
    ],
    [
      'coupon-delete',
      1,
      () =>
        call('coupon-delete', 'DELETE', '/coupons/delete', {
          ...(pools.folders.length ? { folderId: pick(pools.folders) } : {}),
          codes: Array.from({ length: 3 + ri(5) }, () => pick(COUPON_CODES)),
        }),
    ],
    ['coupon-folders', 1, () => call('coupon-folders', 'GET', '/coupons/folders')],
    // Domains
    [
      'domain-add',
      1,
      () =>
        call('domain-add', 'POST', '/domains', {
          name: pick(THROWAWAY_DOMAINS),
          type: pick(['sending', 'transactional']),
        }),
    ],
    [
      'domain-remove',
      1,
      () =>
        call(
          'domain-remove',
          'DELETE',
          `/domains/${pick(THROWAWAY_DOMAINS)}${chance(0.7) ? `?type=${pick(['sending', 'transactional'])}` : ''}`,
        ),
    ],
    ['domains-list', 1, () => call('domains-list', 'GET', '/domains')],
    // Webhook
    [
      'webhook-reset',
      1,
      async () => {
        await call('webhook-remove', 'DELETE', '/account/settings/webhook')
        await call('webhook-set', 'POST', '/account/settings/webhook', {
          url: `http://127.0.0.1:${hookPort}/hook`,
        })
      },
    ],
    // Tracking pages from received mail
    [
      'tracking',
      5,
      async () => {
        if (!trackingUrls.length) return
        const u = new URL(pick(trackingUrls))
        const port = pick(API_PORTS)
        const p = u.pathname
        if (p.startsWith('/t/o/')) return call('track-open', 'GET', p, undefined, { key: null, port })
        if (p.startsWith('/t/c/')) return call('track-click', 'GET', p, undefined, { key: null, port })
        if (p.startsWith('/w/')) return call('track-web', 'GET', p, undefined, { key: null, port })
        if (chance(0.3)) return call('track-unsub-page', 'GET', p, undefined, { key: null, port })
        return call('track-unsub-post', 'POST', p, undefined, {
          key: null,
          port,
          raw: 'List-Unsubscribe=One-Click',
        })
      },
    ],
  ]
}

// ---------------------------------------------------------------------------------------------------------------
// Setup
async function must(
  kind: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const r = await call(kind, method, p, body, { port: PORT_ALL })
  if (r.status !== 200) throw new Error(`setup ${method} ${p}: ${r.status} ${r.text}`)
  return obj(r.body)
}

async function setup(client: pg.Client, hookPort: number) {
  // Verified sending + transactional domain: created through the API (real DKIM key), then marked valid in SQL
  // as the test helper addDomain does (verification would need DNS).
  await must('setup', 'POST', '/domains', { name: DOMAIN, type: 'sending' })
  await must('setup', 'POST', '/domains', { name: DOMAIN, type: 'transactional' })
  await client.query('UPDATE domains SET valid = true WHERE name = $1', [DOMAIN])
  await must('setup', 'POST', '/account/settings/webhook', { url: `http://127.0.0.1:${hookPort}/hook` })
  for (let i = 0; i < 4; i++) {
    const l = await must('setup', 'POST', '/lists', {
      name: `List ${i}`,
      from_name: 'Race',
      from_email: FROM,
      reply_to: `help@${DOMAIN}`,
    })
    pools.lists.push(l.id as number)
    await must('setup', 'POST', `/lists/${l.id}/subscribe-bulk`, {
      subscriber_data: EMAILS.map(person),
      update_existing: true,
    })
  }
  // RACE_FILL: contacts in a list of their own that no call touches, so that plans are those of a real
  // account (index probes) rather than of a table of a few hundred rows (seq scans and hash joins).
  const fill = Number(process.env.RACE_FILL ?? 0)
  if (fill > 0) {
    const l = await must('setup', 'POST', '/lists', { name: 'Filler', from_name: 'Race', from_email: FROM })
    for (let at = 0; at < fill; at += 2500)
      await must('setup', 'POST', `/lists/${l.id}/subscribe-bulk`, {
        subscriber_data: Array.from({ length: Math.min(2500, fill - at) }, (_, i) => ({
          email: `filler${at + i}@fill.example`,
          name: 'F',
        })),
      })
    await client.query('ANALYZE')
  }
  for (let i = 0; i < 3; i++) {
    const t = await must('setup', 'POST', '/templates', {
      name: `T${i}`,
      html: CAMPAIGN_HTML(),
      subject: 'Tmpl',
    })
    pools.templates.push(t.id as number)
  }
  const f = await must('setup', 'POST', '/coupons/folders', { name: 'F0' })
  pools.folders.push(f.id as number)
  await must('setup', 'POST', '/coupons/import', { folderId: f.id, codes: COUPON_CODES })
  for (let i = 0; i < 3; i++) {
    const c = await must('setup', 'POST', '/campaigns', campaignBody())
    pools.campaigns.push(c.id as number)
  }
  for (let i = 0; i < 3; i++) {
    const p = await must('setup', 'POST', '/pipelines', pipelineBody(hookPort))
    pools.pipelines.push(p.id as number)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report helpers
interface LogGroup {
  count: number
  procs: Map<string, number>
  example: Record<string, unknown>
}

/** A short, stable signature of a logged error: its type and the database's own words (after the SQL). */
function errSignature(err: Record<string, unknown>): string {
  const m = String(err.message ?? '')
  const tail = m.length > 300 ? m.slice(m.lastIndexOf(': ') + 2) : m
  return `${String(err.type ?? '')}: ${tail}`
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\d+/g, '#')
}

function shorten(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n / 2)} … ${s.slice(-n / 2)}` : s
}

function readLogs(procs: Proc[]) {
  const groups = new Map<string, LogGroup>()
  const nonJson: { proc: string; line: string }[] = []
  let warns = 0
  const warnGroups = new Map<string, number>()
  for (const p of procs) {
    if (!existsSync(p.logFile)) continue
    for (const line of readFileSync(p.logFile, 'utf8').split('\n')) {
      if (!line.trim()) continue
      let j: Record<string, unknown>
      try {
        j = JSON.parse(line) as Record<string, unknown>
      } catch {
        nonJson.push({ proc: p.name, line: line.slice(0, 300) })
        continue
      }
      const level = Number(j.level)
      if (level === 40) {
        warns++
        const m = String(j.msg)
        warnGroups.set(m, (warnGroups.get(m) ?? 0) + 1)
      }
      if (!(level >= 50)) continue
      const msg = String(j.msg ?? '(no msg)')
      const key = j.err ? `${msg} | ${errSignature(obj(j.err))}` : msg
      let g = groups.get(key)
      if (!g) groups.set(key, (g = { count: 0, procs: new Map(), example: j }))
      g.count++
      g.procs.set(p.name, (g.procs.get(p.name) ?? 0) + 1)
    }
  }
  return { groups, nonJson, warns, warnGroups }
}

/** pg_stat_activity samples during the traffic: what the server sessions wait on, and the longest waits. */
const activity = {
  samples: 0,
  maxActive: 0,
  maxWaitingOnLocks: 0,
  waits: new Map<string, number>(),
  longest: [] as { secs: number; wait: string; query: string }[],
  /** Sessions that block others while not waiting on a lock themselves (heads of lock queues). */
  heads: new Map<string, { n: number; maxXactSecs: number; blocked: number }>(),
}
async function sampleActivity(client: pg.Client) {
  try {
    const { rows } = await client.query(
      `SELECT state, coalesce(wait_event_type || ':' || wait_event, '-') AS wait,
              extract(epoch FROM now() - query_start)::float AS secs, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    )
    activity.samples++
    const active = rows.filter((r) => r.state !== 'idle')
    activity.maxActive = Math.max(activity.maxActive, active.length)
    activity.maxWaitingOnLocks = Math.max(
      activity.maxWaitingOnLocks,
      active.filter((r) => r.wait.startsWith('Lock')).length,
    )
    for (const r of active) {
      const k = `${r.state} ${r.wait}`
      activity.waits.set(k, (activity.waits.get(k) ?? 0) + 1)
      if (r.secs > 5)
        activity.longest.push({ secs: Math.round(r.secs), wait: `${r.state} ${r.wait}`, query: r.query })
    }
    const heads = await client.query(
      `WITH w AS (SELECT pid, pg_blocking_pids(pid) AS by FROM pg_stat_activity
                  WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0),
            h AS (SELECT b AS pid, count(*)::int AS blocked FROM w, unnest(w.by) b
                  WHERE b NOT IN (SELECT pid FROM w) GROUP BY b)
       SELECT a.state, coalesce(a.wait_event_type || ':' || a.wait_event, '-') AS wait, h.blocked,
              extract(epoch FROM now() - a.xact_start)::float AS xact_secs,
              left(regexp_replace(a.query, '\\s+', ' ', 'g'), 100) AS query
       FROM h JOIN pg_stat_activity a ON a.pid = h.pid`,
    )
    for (const r of heads.rows) {
      const k = `${r.state} ${r.wait} | last query: ${r.query}`
      const e = activity.heads.get(k) ?? { n: 0, maxXactSecs: 0, blocked: 0 }
      e.n++
      e.maxXactSecs = Math.max(e.maxXactSecs, Math.round(r.xact_secs))
      e.blocked = Math.max(e.blocked, r.blocked)
      activity.heads.set(k, e)
    }
    activity.longest.sort((a, b) => b.secs - a.secs)
    activity.longest.splice(20)
  } catch {
    /* sampling is best effort */
  }
}

async function allCampaigns(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  for (let page = 1; page < 100; page++) {
    const r = await call('report', 'GET', `/campaigns?per_page=100&page=${page}`, undefined, {
      port: PORT_ALL,
    })
    if (r.status !== 200 || !Array.isArray(r.body)) {
      console.log(`  GET /campaigns page ${page}: ${r.status} ${r.text.slice(0, 200)}`)
      break
    }
    out.push(...(r.body as Record<string, unknown>[]))
    if ((r.body as unknown[]).length < 100) break
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
async function main() {
  console.log(
    `race: db ${DB}, ${LOOPS} loops, ${SECONDS} s, seed ${SEED}, DB_POOL_SIZE=${process.env.DB_POOL_SIZE ?? '(default)'}`,
  )
  for (const port of [PORT_ALL, PORT_API, PORT_WORKER]) {
    const busy = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    )
    if (busy) throw new Error(`port ${port} is already in use`)
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'race-'))
  execFileSync('psql', ['-h', PG_HOST, '-U', PG_USER, '-d', 'postgres', '-qc', `CREATE DATABASE ${DB}`])
  const sink = await startSink()
  const receiver = await startReceiver()
  console.log(`  temp dir ${dir}, sink :${sink.port}, webhook receiver :${receiver.port}`)
  const procs: Proc[] = []
  let client: pg.Client | undefined
  try {
    const all = startProc('all', 'all', PORT_ALL, dir, sink.port)
    procs.push(all)
    await waitHttp(PORT_ALL, all)
    const api = startProc('api', 'api', PORT_API, dir, sink.port)
    const worker = startProc('worker', 'worker', PORT_WORKER, dir, sink.port)
    procs.push(api, worker)
    await waitHttp(PORT_API, api)
    await sleep(1500) // the worker serves no API; give it a moment to start its loops
    console.log(`  pids: ${procs.map((p) => `${p.name}=${p.child.pid}`).join(' ')}`)
    client = new pg.Client({ connectionString: DATABASE_URL })
    await client.connect()
    await setup(client, receiver.port)
    console.log(
      `  setup: lists ${pools.lists}, templates ${pools.templates}, campaigns ${pools.campaigns}, pipelines ${pools.pipelines}`,
    )

    // Traffic
    const ops = operations(receiver.port)
    const totalWeight = ops.reduce((s, o) => s + o[1], 0)
    const choose = () => {
      let x = rand() * totalWeight
      for (const o of ops) if ((x -= o[1]) < 0) return o
      return ops[ops.length - 1]!
    }
    const started = Date.now()
    const deadline = started + SECONDS * 1000
    let done = 0
    let bulkInFlight = 0
    const sampler = setInterval(() => void sampleActivity(client!), 3000)
    const progress = setInterval(() => {
      const n = [...totals.values()].reduce((s, m) => s + [...m.values()].reduce((a, b) => a + b, 0), 0)
      const bad = [...fivexx.values()].reduce((s, f) => s + f.count, 0)
      console.log(
        `  t+${Math.round((Date.now() - started) / 1000)}s: ${n} requests, ${bad} 5xx/timeouts, ${received.mails} mails, ${received.hooks} webhook calls${procs.some((p) => p.exited) ? ', A PROCESS EXITED' : ''}`,
      )
    }, 15_000)
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while (Date.now() < deadline) {
          let [kind, , fn] = choose()
          while (BULK_CONCURRENCY > 0 && kind === 'subscribe-bulk' && bulkInFlight >= BULK_CONCURRENCY)
            [kind, , fn] = choose()
          if (kind === 'subscribe-bulk') bulkInFlight++
          try {
            await fn()
          } catch (err) {
            record(`${kind} (script exception)`, 'neterr', 0)
            console.log(`  script exception in ${kind}: ${(err as Error).stack}`)
          } finally {
            if (kind === 'subscribe-bulk') bulkInFlight--
          }
          done++
        }
      }),
    )
    clearInterval(progress)
    clearInterval(sampler)
    console.log(`  traffic done after ${Math.round((Date.now() - started) / 1000)} s, ${done} operations`)

    // Settle: campaigns that are preparing/sending (and not paused) should finish.
    const settleDeadline = Date.now() + SETTLE_SECONDS * 1000
    let open: { id: number; status: number }[] = []
    for (;;) {
      open = (
        await client.query(
          'SELECT id, status FROM campaigns WHERE status IN (1, 2) AND paused_at IS NULL ORDER BY id',
        )
      ).rows
      if (!open.length || Date.now() > settleDeadline) break
      await sleep(1000)
    }

    // -----------------------------------------------------------------------------------------------------------
    // Report
    const line = (s = '') => console.log(s)
    line()
    line('================================ REPORT ================================')
    line(
      `database ${DB}, seed ${SEED}, ${LOOPS} loops x ${SECONDS} s, DB_POOL_SIZE=${process.env.DB_POOL_SIZE ?? 'default'}, bulk cap ${BULK_CONCURRENCY || 'none'}`,
    )
    line()
    line('--- totals per call kind and status (avg/max ms, >5s) ---')
    for (const [kind, m] of [...totals.entries()].sort()) {
      const l = latency.get(kind)!
      const st = [...m.entries()]
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')
      line(
        `  ${kind.padEnd(26)} ${st.padEnd(40)} avg ${Math.round(l.sum / l.n)} max ${l.max}${l.slow ? ` slow ${l.slow}` : ''}`,
      )
    }
    line()
    line('--- one example body per call kind and 4xx status (expected validation answers?) ---')
    for (const [k, b] of [...clientErrors.entries()].sort()) line(`  ${k.padEnd(30)} ${b}`)
    line()
    line('--- 5xx / timeouts / network errors (deduplicated by path pattern + body) ---')
    if (!fivexx.size) line('  none')
    for (const f of [...fivexx.values()].sort((a, b) => b.count - a.count)) {
      line(`  ${f.count}x ${f.method} ${f.pattern} -> ${f.status}  [kinds: ${[...f.kinds].join(', ')}]`)
      line(`     body: ${f.body}`)
      line(`     e.g.: ${f.example}`)
    }
    line()
    line('--- error-level log lines (level >= 50), grouped by msg ---')
    const logs = readLogs(procs)
    if (!logs.groups.size) line('  none')
    for (const [key, g] of [...logs.groups.entries()].sort((a, b) => b[1].count - a[1].count)) {
      const err = obj(g.example.err)
      line(`  ${g.count}x "${key}"  [${[...g.procs.entries()].map(([p, n]) => `${p}:${n}`).join(' ')}]`)
      line(
        `     err.message: ${shorten(String(err.message ?? '-'))}  err.code: ${String(err.code ?? '-')}  err.type: ${String(err.type ?? '-')}`,
      )
      if (err.query) line(`     err.query: ${shorten(String(err.query).replace(/\s+/g, ' '), 200)}`)
      const extra = Object.fromEntries(
        Object.entries(g.example).filter(
          ([k]) => !['level', 'time', 'pid', 'hostname', 'msg', 'err'].includes(k),
        ),
      )
      if (Object.keys(extra).length) line(`     fields: ${JSON.stringify(extra).slice(0, 400)}`)
      if (err.stack) {
        const frames = String(err.stack)
          .split('\n')
          .filter((l) => /^\s+at /.test(l))
          .slice(0, 8)
        line(`     stack:\n        ${frames.map((f) => f.trim()).join('\n        ')}`)
      }
    }
    if (logs.nonJson.length) {
      line(`  non-JSON output lines: ${logs.nonJson.length}; first ones:`)
      for (const n of logs.nonJson.slice(0, 15)) line(`     [${n.proc}] ${n.line}`)
    }
    line(
      `  (warn-level lines: ${logs.warns}: ${[...logs.warnGroups.entries()]
        .map(([m, n]) => `${n}x "${m}"`)
        .join('; ')
        .slice(0, 800)})`,
    )
    line()
    line('--- campaigns ---')
    const camps = await allCampaigns()
    const byStatus = new Map<unknown, number>()
    for (const c of camps) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1)
    line(
      `  ${camps.length} campaigns; by status: ${[...byStatus.entries()].map(([s, n]) => `${s}:${n}`).join(' ')}`,
    )
    const errored = camps.filter((c) => c.error)
    const codes = new Map<string, number>()
    for (const c of errored) {
      const e = obj(c.error)
      codes.set(String(e.code), (codes.get(String(e.code)) ?? 0) + 1)
    }
    line(
      `  errored: ${errored.length}; by code: ${[...codes.entries()].map(([c, n]) => `${c}:${n}`).join(' ') || '-'}`,
    )
    for (const c of errored) {
      const e = obj(c.error)
      line(
        `   ${e.code === 'internal' ? '!!' : '  '} campaign ${c.id} status ${c.status}: ${e.code}: ${String(e.message).slice(0, 200)}`,
      )
    }
    if (open.length)
      line(
        `  STUCK after ${SETTLE_SECONDS} s settle (status 1/2, not paused): ${open.map((o) => `${o.id}(status ${o.status})`).join(', ')}`,
      )
    else line('  none stuck in status 1/2 (unpaused) after the settle wait')
    const overdue = (
      await client.query(
        `SELECT id, scheduled_at FROM campaigns WHERE status = 7 AND scheduled_at < now() - interval '30 seconds'`,
      )
    ).rows
    if (overdue.length)
      line(
        `  OVERDUE scheduled (status 7, due > 30 s ago): ${overdue.map((o) => `${o.id}@${o.scheduled_at.toISOString()}`).join(', ')}`,
      )
    const ledger = (
      await client.query(
        `SELECT kind, status, count(*)::int AS n, count(*) FILTER (WHERE status = 4 AND claimed_until < now())::int AS expired
         FROM messages GROUP BY kind, status ORDER BY kind, status`,
      )
    ).rows
    line(
      `  message ledger (kind/status: n): ${ledger.map((r) => `${r.kind}/${r.status}:${r.n}${r.expired ? `(claim lease expired ${r.expired})` : ''}`).join(' ')}`,
    )
    line()
    line('--- database activity samples (every 3 s during the traffic) ---')
    line(
      `  ${activity.samples} samples; max active sessions ${activity.maxActive}; max waiting on locks ${activity.maxWaitingOnLocks}`,
    )
    line(
      `  session-samples by state/wait: ${[...activity.waits.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k}=${n}`)
        .join(', ')}`,
    )
    line('  heads of lock queues (blocking others, not waiting on a lock), per sample:')
    for (const [k, e] of [...activity.heads.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 10))
      line(`    ${e.n}x (max xact ${e.maxXactSecs}s, max ${e.blocked} waiting on it): ${k}`)
    const seen = new Set<string>()
    for (const l of activity.longest) {
      if (seen.has(l.query)) continue
      seen.add(l.query)
      line(`  running ${l.secs}s (${l.wait}): ${l.query}`)
    }
    const after = (
      await client.query(
        `SELECT state, coalesce(wait_event_type || ':' || wait_event, '-') AS wait,
                extract(epoch FROM now() - query_start)::int AS secs, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
      )
    ).rows
    line(`  non-idle sessions after the settle wait: ${after.length}`)
    for (const r of after) line(`    ${r.state} ${r.wait} ${r.secs}s: ${r.query}`)
    line()
    line('--- received ---')
    line(`  mails at the sink: ${received.mails}; RCPT refused (gone*): ${received.rcptRefused}`)
    line(
      `  account webhook calls: ${received.hooks} (${received.hookBodies} bytes); pipeline webhook-node calls: ${received.pipelineHooks}`,
    )
    line(`  tracking URLs collected: ${trackingUrls.length}`)
    for (const p of procs)
      if (p.exited) line(`  PROCESS ${p.name} EXITED during the run: ${JSON.stringify(p.exited)}`)
    line(`  logs: ${procs.map((p) => p.logFile).join(' ')}`)
    line('========================================================================')
  } finally {
    console.log('cleanup: stopping processes')
    await client?.end().catch(() => undefined)
    await Promise.all(procs.map(stopProc))
    for (const p of procs) console.log(`  ${p.name} (pid ${p.child.pid}) exit ${JSON.stringify(p.exited)}`)
    await new Promise<void>((r) => sink.close(() => r()))
    const closed = new Promise<void>((r) => receiver.server.close(() => r()))
    receiver.server.closeAllConnections()
    await closed
    if (process.env.RACE_KEEP_DB !== '1') {
      execFileSync('psql', [
        '-h',
        PG_HOST,
        '-U',
        PG_USER,
        '-d',
        'postgres',
        '-qc',
        `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`,
      ])
      console.log(`  dropped ${DB}`)
    } else console.log(`  kept ${DB}`)
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('race failed:', err)
    process.exit(1)
  },
)
