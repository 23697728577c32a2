import { openDatabase, type DbHandle } from '../src/core/db/client.js'
import { sha256Hex } from '../src/core/ids.js'
import { api, timeRuns } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/**
 * Issue 4: `GET /campaigns/{id}/stats` on a campaign with about BENCH_STATS_EVENTS events (default 1,000,000),
 * without a range, with a week's range and with a range over the whole campaign; bar ≤ 50 ms (design.md).
 * The data is generated with set-based SQL straight into the server's PostgreSQL database, consistent the
 * way sending and tracking leave it: message rows with their milestones, events, sharded counters, and
 * purchases for the conversions.
 */
export interface CampaignStatsFigures {
  events: number
  recipients: number
  transactions: number
  seedSeconds: number
  statsMs: { median: number; p95: number }
  statsWeekRangeMs: { median: number; p95: number }
  statsFullRangeMs: { median: number; p95: number }
  /**
   * The plain stats call right after the seeding's mass update, before any vacuum: the conversions' index
   * cannot be read index-only until the visibility map is set again (autovacuum does that within minutes of
   * a send). The other figures are measured after a VACUUM of messages and events, the state a finished
   * campaign is read in.
   */
  statsBeforeVacuumMs: { median: number; p95: number }
  stats: unknown
}

const DAY_MS = 86_400_000
const SHARDS = 16

/**
 * The database of a server started by startServerProcess('postgres'): it names it after this process and
 * the server's port (bench/lib/server-process.ts).
 */
export function serverDatabaseUrl(pgServerUrl: string, server: ServerProcess): string {
  const u = new URL(pgServerUrl)
  u.pathname = `/tidings_bench_${process.pid}_${new URL(server.url).port}`
  return u.toString()
}

/** The account the server's bootstrap key opened. */
export async function accountOfKey(db: DbHandle, key: string): Promise<number> {
  const r = await db.executeSql('SELECT account_id FROM api_keys WHERE key_hash = $1', [sha256Hex(key)])
  const id = r.rows[0]?.account_id
  if (typeof id !== 'number') throw new Error('the bench key has no account')
  return id
}

const day = (d: Date) => d.toISOString().slice(0, 10)

/**
 * Seeds one sent campaign of `recipients` messages. Per message g: a send; opens for 40 % (g % 10 < 4),
 * 1–3 each, the first within 30 days of sending; clicks for 10 % (g % 10 = 0), 1–2 each; hard bounces 2 %
 * (g % 50 = 47), soft 2 % (g % 50 = 49); complaints 0.1 %, unsubscribes 0.5 %. About 2 events a message.
 */
export async function seedCampaign(
  db: DbHandle,
  accountId: number,
  recipients: number,
  start: Date,
): Promise<{ campaignId: number; events: number; transactions: number }> {
  const t0 = start.toISOString()
  const campaign = await db.executeSql(
    `INSERT INTO campaigns (account_id, title, subject, from_name, from_email, reply_to, html_text, targets,
                            status, sent_at, finished_at, recipients, links)
     VALUES ($1, 'Bench', 'Bench sale', 'Shop', 'news@bench.example', 'news@bench.example',
             '<a href="https://shop.example/a">a</a><a href="https://shop.example/b">b</a>',
             '{"lists":[],"segments":[]}', 3, $2::timestamptz, $2::timestamptz, $3,
             '["https://shop.example/a","https://shop.example/b"]')
     RETURNING id`,
    [accountId, t0, recipients],
  )
  const campaignId = Number(campaign.rows[0]!.id)
  // Milestones as tracking leaves them; times spread over 30 days from the start.
  await db.executeSql(
    `INSERT INTO messages (account_id, kind, campaign_id, email, subject, status, sent_at, first_open_at,
                           first_click_at, bounced_at, soft_bounced_at, complained_at, unsubscribed_at)
     SELECT $1, 'campaign', $2, 'u' || g || '@bench.example', 'Bench sale', 1, s,
            CASE WHEN g % 10 < 4 THEN o END, CASE WHEN g % 10 = 0 THEN o + interval '5 minutes' END,
            CASE WHEN g % 50 = 47 THEN s + interval '1 minute' END,
            CASE WHEN g % 50 = 49 THEN s + interval '1 minute' END,
            CASE WHEN g % 1000 = 3 THEN o + interval '1 hour' END,
            CASE WHEN g % 200 = 2 THEN o + interval '2 hours' END
     FROM generate_series(1, $3::int) g,
          LATERAL (SELECT $4::timestamptz + (g % 3600) * interval '1 second' AS s) sent,
          LATERAL (SELECT sent.s + ((g::bigint * 7919) % 2592000) * interval '1 second' AS o) opened`,
    [accountId, campaignId, recipients, t0],
  )
  const ev = `INSERT INTO events (account_id, message_id, campaign_id, email, event, msg, url, occurred_at)`
  const from = `FROM messages m WHERE m.campaign_id = ${campaignId}`
  await db.executeSql(`${ev} SELECT account_id, id, campaign_id, email, 'send', NULL, NULL, sent_at ${from}`)
  // Repeat opens a day apart and repeat clicks three hours apart, after the first.
  await db.executeSql(
    `${ev} SELECT account_id, id, campaign_id, email, 'open', NULL, NULL, first_open_at + k * interval '1 day'
     FROM messages m, generate_series(0, (m.id % 3)::int) k
     WHERE m.campaign_id = ${campaignId} AND first_open_at IS NOT NULL`,
  )
  await db.executeSql(
    `${ev} SELECT account_id, id, campaign_id, email, 'click', NULL,
                  CASE WHEN k = 0 THEN 'https://shop.example/a' ELSE 'https://shop.example/b' END,
                  first_click_at + k * interval '3 hours'
     FROM messages m, generate_series(0, ((m.id / 10) % 2)::int) k
     WHERE m.campaign_id = ${campaignId} AND first_click_at IS NOT NULL`,
  )
  for (const [event, col] of [
    ['hard_bounce', 'bounced_at'],
    ['soft_bounce', 'soft_bounced_at'],
    ['spam_complaint', 'complained_at'],
    ['unsub', 'unsubscribed_at'],
  ]) {
    await db.executeSql(
      `${ev} SELECT account_id, id, campaign_id, email, '${event}', NULL, NULL, ${col}
       ${from} AND ${col} IS NOT NULL`,
    )
  }
  // The counters, per shard, exactly as the recorder and the sender would have added them.
  await db.executeSql(
    `INSERT INTO stat_counters (campaign_id, pipeline_id, action_id, shard, inject, bounce, hard_bounce,
                                soft_bounce, open, total_open, click, total_click, spam, unsub)
     SELECT ${campaignId}, 0, '', mm.shard, mm.inject, mm.bounce, mm.hard, mm.soft, mm.open,
            coalesce(ee.total_open, 0), mm.click, coalesce(ee.total_click, 0), mm.spam, mm.unsub
     FROM (SELECT id % ${SHARDS} AS shard, count(*) AS inject,
                  count(*) FILTER (WHERE bounced_at IS NOT NULL OR soft_bounced_at IS NOT NULL) AS bounce,
                  count(bounced_at) AS hard, count(soft_bounced_at) AS soft, count(first_open_at) AS open,
                  count(first_click_at) AS click, count(complained_at) AS spam,
                  count(unsubscribed_at) AS unsub
           ${from} GROUP BY 1) mm
     LEFT JOIN (SELECT message_id % ${SHARDS} AS shard,
                       count(*) FILTER (WHERE event = 'open') AS total_open,
                       count(*) FILTER (WHERE event = 'click') AS total_click
                FROM events WHERE campaign_id = ${campaignId} GROUP BY 1) ee ON ee.shard = mm.shard`,
  )
  // Purchases by 1 % of the recipients: half within a clicker's 7-day window, the rest not attributable.
  const purchases = Math.max(1, Math.floor(recipients / 100))
  await db.executeSql(
    `INSERT INTO transactions (account_id, order_id, email, amount, occurred_at)
     SELECT $1, 'bench-' || g, m.email, 10 + g % 90,
            coalesce(m.first_click_at, m.sent_at) + (g % 14) * interval '1 day'
     FROM generate_series(1, $2::int) g
     JOIN messages m ON m.campaign_id = ${campaignId} AND m.email = 'u' || (g * 97 % $3 + 1) || '@bench.example'`,
    [accountId, purchases, recipients],
  )
  await db.executeSql('ANALYZE messages; ANALYZE events; ANALYZE stat_counters; ANALYZE transactions')
  const n = await db.executeSql(`SELECT count(*)::int AS n FROM events WHERE campaign_id = ${campaignId}`)
  return { campaignId, events: Number(n.rows[0]!.n), transactions: purchases }
}

export async function benchCampaignStats(
  server: ServerProcess,
  pgServerUrl: string,
  runs = 50,
): Promise<CampaignStatsFigures> {
  const wanted = Number(process.env.BENCH_STATS_EVENTS ?? 1_000_000)
  const recipients = Math.max(100, Math.round(wanted / 2))
  const db = await openDatabase({ databaseUrl: serverDatabaseUrl(pgServerUrl, server), poolSize: 2 })
  try {
    const accountId = await accountOfKey(db, server.key)
    // Sent 20 days ago at midnight UTC: its 30 days of events run into the future, all within a year.
    const start = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 20 * DAY_MS)
    const t0 = process.hrtime.bigint()
    const seeded = await seedCampaign(db, accountId, recipients, start)
    const seedSeconds = Number(process.hrtime.bigint() - t0) / 1e9
    const { url, key } = server
    const path = `/campaigns/${seeded.campaignId}/stats`
    const get = (query: string) => async () => void (await api(url, key, 'GET', `${path}${query}`))
    const week = `?from_date=${day(new Date(start.getTime() + 7 * DAY_MS))}&to_date=${day(new Date(start.getTime() + 13 * DAY_MS))}`
    const full = `?from_date=${day(start)}&to_date=${day(new Date(start.getTime() + 40 * DAY_MS))}`
    const fresh = await timeRuns(runs, get(''))
    await db.executeSql('VACUUM ANALYZE messages, events')
    const plain = await timeRuns(runs, get(''))
    const weekRange = await timeRuns(runs, get(week))
    const fullRange = await timeRuns(runs, get(full))
    const sample = (await api(url, key, 'GET', `${path}${week}`)).json as { stats: unknown }
    return {
      events: seeded.events,
      recipients,
      transactions: seeded.transactions,
      seedSeconds: Math.round(seedSeconds),
      statsMs: { median: plain.median, p95: plain.p95 },
      statsWeekRangeMs: { median: weekRange.median, p95: weekRange.p95 },
      statsFullRangeMs: { median: fullRange.median, p95: fullRange.p95 },
      statsBeforeVacuumMs: { median: fresh.median, p95: fresh.p95 },
      stats: sample.stats,
    }
  } finally {
    await db.close()
  }
}
