import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { openDatabase, type DbHandle } from '../src/core/db/client.js'
import { signToken } from '../src/core/ids.js'
import { accountOfKey, serverDatabaseUrl } from './campaign-stats.bench.js'
import { round } from './lib/measure.js'
import { startServerProcess, type BenchDb, type ServerProcess } from './lib/server-process.js'

/**
 * Issue 4: open-pixel and click-redirect hits/s at 64 connections against a started server, each request a
 * different message of one campaign (round robin over BENCH_TRACKING_MESSAGES, default 100,000), so most
 * hits are first opens/clicks: a milestone stamp, an event and a counter shard in one transaction. Bar ≥ 3,000/s
 * (design.md). Afterwards the campaign's counters are compared with the hits answered.
 */
export interface TrackingRun {
  hitsPerSec: number
  p99Ms: number
  answered: number
  other: number
  errors: number
}

export interface TrackingFigures {
  messages: number
  open: TrackingRun
  click: TrackingRun
  /** Where click targets came from: the campaign (through the campaign sources) or the message rows. */
  clickLinks: 'campaign' | 'message rows'
  counters: { total_open: number; open: number; total_click: number; click: number }
}

const LINKS = ['https://shop.example/a', 'https://shop.example/b']

async function seedMessages(db: DbHandle, accountId: number, count: number) {
  const c = await db.executeSql(
    `INSERT INTO campaigns (account_id, title, subject, from_name, from_email, reply_to, html_text, targets,
                            status, sent_at, recipients, links)
     VALUES ($1, 'Tracking bench', 'Bench', 'Shop', 'news@bench.example', 'news@bench.example', '<p>x</p>',
             '{"lists":[],"segments":[]}', 3, now(), $2, $3::jsonb)
     RETURNING id`,
    [accountId, count, JSON.stringify(LINKS)],
  )
  const campaignId = Number(c.rows[0]!.id)
  await db.executeSql(
    `INSERT INTO messages (account_id, kind, campaign_id, email, subject, status, sent_at)
     SELECT $1, 'campaign', $2, 't' || g || '@bench.example', 'Bench', 1, now()
     FROM generate_series(1, $3::int) g`,
    [accountId, campaignId, count],
  )
  await db.executeSql('ANALYZE messages')
  const ids = await db.executeSql('SELECT id FROM messages WHERE campaign_id = $1 ORDER BY id', [campaignId])
  const secret = await db.executeSql(`SELECT value FROM instance_settings WHERE key = 'link_secret'`)
  return {
    campaignId,
    ids: ids.rows.map((r) => Number(r.id)),
    secret: String(secret.rows[0]!.value),
  }
}

async function hammer(base: string, paths: string[], seconds: number): Promise<TrackingRun> {
  let i = 0
  const r = await autocannon({
    url: base,
    connections: 64,
    pipelining: 1,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length]! }),
      },
    ],
  })
  const answered = r['2xx'] + r['3xx']
  return {
    hitsPerSec: Math.round(answered / r.duration),
    p99Ms: round(r.latency.p99),
    answered,
    other: r['4xx'] + r['5xx'],
    errors: r.errors,
  }
}

async function readCampaignCounters(db: DbHandle, campaignId: number) {
  const r = await db.executeSql(
    `SELECT coalesce(sum(total_open), 0)::int AS total_open, coalesce(sum(open), 0)::int AS open,
            coalesce(sum(total_click), 0)::int AS total_click, coalesce(sum(click), 0)::int AS click
     FROM stat_counters WHERE campaign_id = $1`,
    [campaignId],
  )
  const row = r.rows[0] as TrackingFigures['counters']
  return row
}

/**
 * Starts its own server(s): with PostgreSQL it seeds the running server's database; PGlite has one owner,
 * so the data directory is prepared by a first start (account, secret, schema), seeded while no server runs,
 * then served by a second start.
 */
export async function benchTracking(
  db: BenchDb,
  pgServerUrl: string | undefined,
  seconds: number,
): Promise<TrackingFigures> {
  const count = Number(process.env.BENCH_TRACKING_MESSAGES ?? 100_000)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-bench-tracking-'))
  const env: Record<string, string> = db === 'pglite' ? { DATA_DIR: dataDir } : {}
  let server: ServerProcess | undefined
  let handle: DbHandle | undefined
  const open = async () =>
    db === 'postgres'
      ? openDatabase({ databaseUrl: serverDatabaseUrl(pgServerUrl!, server!), poolSize: 2 })
      : openDatabase({ dataDir })
  try {
    server = await startServerProcess(db, pgServerUrl, env)
    const key = server.key
    if (db === 'pglite') {
      await server.stop()
      server = undefined
    }
    handle = await open()
    const seeded = await seedMessages(handle, await accountOfKey(handle, key), count)
    if (db === 'pglite') {
      await handle.close()
      handle = undefined
      server = await startServerProcess(db, pgServerUrl, { ...env, BOOTSTRAP_API_KEY: key })
    }
    const base = server!.url
    const token = (purpose: string, payload: string) => signToken(seeded.secret, purpose, payload)
    const opens = seeded.ids.map((id) => `/t/o/${token('open', String(id))}.gif`)
    const clicks = seeded.ids.map((id, n) => `/t/c/${token('click', `${id}.${n % LINKS.length}`)}`)

    // Campaign mail keeps its links on the campaign; until the campaign sources answer, use the rows.
    // (The probe's click is counted too: total_click is the clicks answered plus one.)
    let clickLinks: TrackingFigures['clickLinks'] = 'campaign'
    const probe = await fetch(`${base}${clicks[clicks.length - 1]!}`, { redirect: 'manual' })
    if (probe.status !== 302) {
      clickLinks = 'message rows'
      if (db === 'pglite') await server!.stop()
      const fix = handle ?? (await open())
      await fix.executeSql('UPDATE messages SET links = $1::jsonb WHERE campaign_id = $2', [
        JSON.stringify(LINKS),
        seeded.campaignId,
      ])
      if (db === 'pglite') {
        await fix.close()
        server = await startServerProcess(db, pgServerUrl, { ...env, BOOTSTRAP_API_KEY: key })
      }
    }
    const target = server!.url
    const openRun = await hammer(target, opens, seconds)
    const clickRun = await hammer(target, clicks, seconds)
    if (db === 'pglite') {
      await server!.stop()
      server = undefined
      handle = await open()
    }
    return {
      messages: count,
      open: openRun,
      click: clickRun,
      clickLinks,
      counters: await readCampaignCounters(handle!, seeded.campaignId),
    }
  } finally {
    await handle?.close()
    await server?.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
