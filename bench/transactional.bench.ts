import autocannon from 'autocannon'
import { api, round } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'
import type { PostfixSink } from './lib/smtp-sink.js'

export interface TransactionalFigures {
  intakeReqPerSec: number
  accepted: number
  deliveredMsgPerSec: number
  drainSeconds: number
  non2xx: number
  /** Seconds of the same calls sent and delivered before the measured run (0: a cold process). */
  warmupSeconds: number
}

export const BENCH_DOMAIN = 'bench.example'

/** One order confirmation: personalised, tracked, to one recipient. */
export const BENCH_MESSAGE = {
  message: {
    subject: 'Order *|order|* confirmed',
    from_name: 'Bench Shop',
    from_email: `orders@${BENCH_DOMAIN}`,
    html: '<html><body><p>Hello *|name|*, your order *|order|* ships today.</p><p><a href="https://shop.example/track?o=1">Track it</a></p></body></html>',
    to: [{ email: 'customer@example.com', name: 'Customer' }],
    global_merge_vars: [
      { name: 'name', content: 'Customer' },
      { name: 'order', content: 'A-1001' },
    ],
    options: { open_tracking: true, click_tracking: true },
  },
}

/** Adds BENCH_DOMAIN as a transactional sending domain, publishes its records and verifies it. */
export async function verifiedBenchDomain(
  server: ServerProcess,
  publish: (records: { type: string; host: string; value: string }[]) => void,
): Promise<void> {
  const { url, key } = server
  const domain = (await api(url, key, 'POST', '/domains', { name: BENCH_DOMAIN, type: 'transactional' }))
    .json as {
    dns: { type: string; host: string; value: string }[]
  }
  publish(domain.dns)
  const verified = (await api(url, key, 'POST', `/domains/${BENCH_DOMAIN}/verify`)).json as { valid: boolean }
  if (!verified.valid) throw new Error('bench domain did not verify against the local DNS server')
}

/** Waits (bounded) until smtp-sink has counted `target` messages; how many it counted. */
export async function sinkReaches(sink: PostfixSink, target: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs
  while (sink.count() < target && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100))
  return sink.count()
}

/**
 * The same calls for a few seconds, delivered before the measured run starts. A server process started for the
 * bench compiles its hot code in the first seconds under load (V8's optimising compiler took a fifth of the machine
 * in the first two seconds, 8 % over the first 14: perf, 2026-11-29) and starts its signing threads with the
 * first mail; a service that has run for a while has done both. BENCH_WARMUP_SECONDS=0 measures a cold process.
 */
async function warmUp(url: string, key: string, body: string, sink: PostfixSink, seconds: number) {
  const before = sink.count()
  const r = await sendCalls(url, key, body, seconds)
  const arrived = (await sinkReaches(sink, before + r['2xx'], 120_000)) - before
  if (arrived < r['2xx']) throw new Error(`warm-up: ${arrived} of ${r['2xx']} accepted calls' mail arrived`)
  // Calls still in flight when the load stopped are not in its count, but their mail comes: it must not be
  // counted as the measured run's. Quiet for a second (bounded) means it has all come.
  const deadline = Date.now() + 30_000
  for (let last = -1; sink.count() !== last && Date.now() < deadline;) {
    last = sink.count()
    await new Promise((res) => setTimeout(res, 1000))
  }
}

/** The order confirmation, posted for `seconds` over 64 connections. */
const sendCalls = (url: string, key: string, body: string, seconds: number) =>
  autocannon({
    url: `${url}/transactional/send-message`,
    method: 'POST',
    headers: { key, 'content-type': 'application/json' },
    body,
    connections: 64,
    duration: seconds,
  })

/**
 * Issue 3 figures: POST /transactional/send-message intake at 64 connections, then how fast the accepted
 * messages (personalised, tracked, DKIM-signed) reach smtp-sink.
 */
export async function benchTransactional(
  server: ServerProcess,
  sink: PostfixSink,
  publish: (records: { type: string; host: string; value: string }[]) => void,
  seconds: number,
  warmupSeconds = 0,
): Promise<TransactionalFigures> {
  const { url, key } = server
  await verifiedBenchDomain(server, publish)

  const body = JSON.stringify(BENCH_MESSAGE)
  if (warmupSeconds > 0) await warmUp(url, key, body, sink, warmupSeconds)
  const before = sink.count()
  const started = Date.now()
  const r = await sendCalls(url, key, body, seconds)
  const accepted = r['2xx']
  const delivered = (await sinkReaches(sink, before + accepted, 300_000)) - before
  const drainSeconds = (Date.now() - started) / 1000
  return {
    intakeReqPerSec: Math.round(r.requests.average),
    accepted,
    deliveredMsgPerSec: Math.round(delivered / drainSeconds),
    drainSeconds: round(drainSeconds),
    non2xx: r.non2xx,
    warmupSeconds,
  }
}
