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

/**
 * Issue 3 figures: POST /transactional/send-message intake at 64 connections, then how fast the accepted
 * messages (personalised, tracked, DKIM-signed) reach smtp-sink.
 */
export async function benchTransactional(
  server: ServerProcess,
  sink: PostfixSink,
  publish: (records: { type: string; host: string; value: string }[]) => void,
  seconds: number,
): Promise<TransactionalFigures> {
  const { url, key } = server
  const domain = (await api(url, key, 'POST', '/domains', { name: BENCH_DOMAIN, type: 'transactional' }))
    .json as {
    dns: { type: string; host: string; value: string }[]
  }
  publish(domain.dns)
  const verified = (await api(url, key, 'POST', `/domains/${BENCH_DOMAIN}/verify`)).json as { valid: boolean }
  if (!verified.valid) throw new Error('bench domain did not verify against the local DNS server')

  const body = JSON.stringify(BENCH_MESSAGE)
  const before = sink.count()
  const started = Date.now()
  const r = await autocannon({
    url: `${url}/transactional/send-message`,
    method: 'POST',
    headers: { key, 'content-type': 'application/json' },
    body,
    connections: 64,
    duration: seconds,
  })
  const accepted = r['2xx']
  const deadline = Date.now() + 300_000
  while (sink.count() - before < accepted && Date.now() < deadline)
    await new Promise((res) => setTimeout(res, 100))
  const delivered = sink.count() - before
  const drainSeconds = (Date.now() - started) / 1000
  return {
    intakeReqPerSec: Math.round(r.requests.average),
    accepted,
    deliveredMsgPerSec: Math.round(delivered / drainSeconds),
    drainSeconds: round(drainSeconds),
    non2xx: r.non2xx,
  }
}
