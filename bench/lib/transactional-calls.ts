import http from 'node:http'
import pg from 'pg'
import { round } from './measure.js'

/** How long accepted transactional mail waited, read from the ledger. */
export interface TransactionalWaits {
  /**
   * From the call's row written at intake (`created_at`, the server's clock) to the relay's acceptance marked
   * (`sent_at`), in ms, over the accepted calls: rendering and signing included.
   */
  waitMs: { p50: number; p95: number; p99: number; max: number }
  /** How many waited over a second. */
  overOneSecond: number
  /** When the slowest of them was called, in seconds from the first call. */
  slowestAtSeconds: number
}

/**
 * A POST on a kept-alive connection; its status. `fetch` cost this bench about 2 ms of CPU a call (this, about 1),
 * taken from the machine the send is measured on.
 */
function post(agent: http.Agent, url: string, key: string, path: string, body: unknown): Promise<number> {
  const data = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: { key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    // A call the server holds this long fails, so the bench ends however the server behaves.
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')))
    req.end(data)
  })
}

/**
 * Calls `send-message` (from orders@`domain`) at `perSec` until `until()` says stop (or the deadline), each
 * call's mail to an address of its own, counting in `progress` the calls made and those answered 200 as they
 * come. At most `perSec` calls in flight: a server that answers slowly gets fewer calls, not a pile of them.
 */
export async function transactionalCalls(
  url: string,
  key: string,
  domain: string,
  perSec: number,
  until: () => boolean,
  deadline: number,
  progress: { calls: number; accepted: number },
): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const inFlight = new Set<Promise<void>>()
  const started = Date.now()
  try {
    while (!until() && Date.now() < deadline) {
      const due = started + (progress.calls * 1000) / perSec
      if (Date.now() < due) {
        await new Promise((r) => setTimeout(r, due - Date.now()))
        continue
      }
      const n = progress.calls++
      const call = post(agent, url, key, '/transactional/send-message', {
        message: {
          subject: 'Order *|order|* confirmed',
          from_name: 'Bench Shop',
          from_email: `orders@${domain}`,
          html: '<html><body><p>Hello *|name|*, your order *|order|* ships today.</p><p><a href="https://shop.example/track?o=1">Track it</a></p></body></html>',
          to: [{ email: `buyer${n}@bench-buyers.example`, name: `Buyer ${n}` }],
          global_merge_vars: [
            { name: 'name', content: `Buyer ${n}` },
            { name: 'order', content: `A-${n}` },
          ],
        },
      }).then(
        (status) => void (status === 200 && progress.accepted++),
        () => undefined,
      )
      inFlight.add(call)
      void call.finally(() => inFlight.delete(call))
      if (inFlight.size >= perSec) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
  } finally {
    agent.destroy()
  }
}

/** The accepted transactional mail's waits, read from the ledger (sent, so `sent_at` is set). */
export async function transactionalWaits(
  databaseUrl: string,
): Promise<TransactionalWaits & { sent: number }> {
  const c = new pg.Client({ connectionString: databaseUrl })
  await c.connect()
  try {
    const { rows } = await c.query<{
      sent: number
      p: number[] | null
      max: number
      over: number
      at: number
    }>(
      `WITH t AS (SELECT created_at, extract(epoch FROM sent_at - created_at) * 1000 AS w
                  FROM messages WHERE kind = 'transactional' AND status = 1)
       SELECT count(*)::int AS sent,
              percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY w) AS p, max(w) AS max,
              (count(*) FILTER (WHERE w > 1000))::int AS over,
              (SELECT extract(epoch FROM s.created_at - (SELECT min(created_at) FROM t))
               FROM t s ORDER BY s.w DESC LIMIT 1) AS at
       FROM t`,
    )
    const r = rows[0]!
    const ms = (n: number | undefined) => Math.round(Number(n ?? 0))
    return {
      sent: r.sent,
      waitMs: { p50: ms(r.p?.[0]), p95: ms(r.p?.[1]), p99: ms(r.p?.[2]), max: ms(r.max) },
      overOneSecond: r.over,
      slowestAtSeconds: round(Number(r.at ?? 0)),
    }
  } finally {
    await c.end()
  }
}
