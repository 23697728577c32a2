/**
 * `npm run bench [-- scenario...]`: starts real server processes (PostgreSQL and PGlite) on loopback, drives
 * them, prints the figures beside their bars and writes them to bench/results/. Never a timed test.
 * BENCH_DATABASE_URL picks the PostgreSQL server (default: local 5432, else a throwaway cluster);
 * BENCH_SECONDS sets each load run's length (default 10).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { findOrStartPostgres } from '../scripts/pg-cluster.js'
import { load } from './lib/measure.js'
import {
  startBareFastify,
  startServerProcess,
  startWorkerProcess,
  type BenchDb,
} from './lib/server-process.js'
import { benchSubscribers } from './subscribers.bench.js'
import { benchTransactional } from './transactional.bench.js'
import { benchTransactionalSplit } from './transactional-split.bench.js'
import { benchCampaignStats } from './campaign-stats.bench.js'
import { benchTracking } from './tracking.bench.js'
import { benchCampaignSend, type CampaignSendOptions } from './campaign-send.bench.js'
import { benchTransactions } from './transactions.bench.js'
import { benchFeedRefresh } from './feeds.bench.js'
import { benchRecommenders } from './recommenders.bench.js'
import { benchAutomation } from './automation.bench.js'
import { startPostfixSink } from './lib/smtp-sink.js'
import { bracketed, shareOf } from './lib/rsa-ceiling.js'
import { startDnsServer } from '../test/helpers/dns-server.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
/** Seconds of transactional calls sent and delivered before the measured run (transactional.bench.ts, warmUp). */
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 5)
/** BENCH_DBS=postgres (or pglite) runs one database only; both by default. */
const benchDbs = (process.env.BENCH_DBS ?? 'postgres,pglite').split(',').filter(Boolean) as BenchDb[]

/** The DNS answers that make a domain's published records verify. */
function zoneOf(records: { type: string; host: string; value: string }[]) {
  return Object.fromEntries(
    records.map((r) => [
      r.host,
      [
        r.type === 'MX'
          ? { type: 'MX' as const, exchange: r.value }
          : { type: 'TXT' as const, data: r.value },
      ],
    ]),
  )
}

async function main(): Promise<void> {
  const only = process.argv.slice(2)
  const want = (name: string) => only.length === 0 || only.includes(name)
  const { url: pgUrl, cluster } = await findOrStartPostgres(process.env.BENCH_DATABASE_URL)
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  }
  // Send rates are CPU-bound: each send scenario measures the signing ceiling just before and just after it
  // (`bracketed`) and reports its rate as a share of their mean, beside the readings.
  try {
    if (want('subscribers')) {
      const bare = await startBareFastify()
      const baseline = await load(`${bare.url}/bare/user123@bench.example`, {}, 64, seconds)
      await bare.stop()
      results.bareFastifyReqPerSec = baseline.reqPerSec
      for (const db of benchDbs) {
        if (db === 'postgres' && !pgUrl) continue
        const server = await startServerProcess(db, pgUrl)
        try {
          const figures = await benchSubscribers(server, seconds)
          results[`subscribers.${db}`] = {
            ...figures,
            lookupVsBare: `${Math.round((100 * figures.lookup.reqPerSec) / baseline.reqPerSec)} %`,
          }
        } finally {
          await server.stop()
        }
      }
    }
    const transactionalPerSec = Number(process.env.BENCH_TRANSACTIONAL_PER_SEC ?? 50)
    if (!(transactionalPerSec > 0))
      throw new Error('BENCH_TRANSACTIONAL_PER_SEC: a number of calls a second, above 0')
    // `transactional-split` (PostgreSQL): BENCH_TRANSACTIONAL_PER_SEC order confirmations a second for BENCH_SECONDS
    // to a ROLE=api process, sent by a ROLE=worker process; how long each one's mail waited (issue 11).
    if (want('transactional-split')) {
      if (!pgUrl) throw new Error('transactional-split needs PostgreSQL')
      const sink = await startPostfixSink()
      if (!sink) throw new Error('smtp-sink not found: apt-get install postfix (only its smtp-sink is used)')
      const dns = await startDnsServer({}, { autoClose: false })
      const env = { SMTP_URL: sink.url, DNS_SERVERS: dns.address }
      try {
        const apiProcess = await startServerProcess('postgres', pgUrl, { ...env, ROLE: 'api' })
        try {
          const worker = await startWorkerProcess(apiProcess, env)
          try {
            results['transactional-split.postgres'] = await benchTransactionalSplit(
              apiProcess,
              sink,
              (records) => dns.setZone(zoneOf(records)),
              seconds,
              transactionalPerSec,
            )
          } finally {
            await worker.stop()
          }
        } finally {
          await apiProcess.stop()
        }
      } finally {
        sink.stop()
        await dns.close()
      }
    }
    if (want('transactional')) {
      const sink = await startPostfixSink()
      if (!sink) throw new Error('smtp-sink not found: apt-get install postfix (only its smtp-sink is used)')
      const dns = await startDnsServer({}, { autoClose: false })
      try {
        for (const db of benchDbs) {
          if (db === 'postgres' && !pgUrl) continue
          const server = await startServerProcess(db, pgUrl, { SMTP_URL: sink.url, DNS_SERVERS: dns.address })
          try {
            const { value: figures, ceiling } = await bracketed(() =>
              benchTransactional(
                server,
                sink,
                (records) => dns.setZone(zoneOf(records)),
                seconds,
                warmupSeconds,
              ),
            )
            results[`transactional.${db}`] = {
              ...figures,
              rsa2048Ceiling: ceiling,
              deliveredShareOfRsaCeiling: shareOf(ceiling, figures.deliveredMsgPerSec),
            }
          } finally {
            await server.stop()
          }
        }
      } finally {
        sink.stop()
        await dns.close()
      }
    }
    // BENCH_CAMPAIGN_RECIPIENTS (or BENCH_RECIPIENTS) sizes the campaign (default 100,000; 1,000,000 works). `campaign-send-coupons` sends the same
    // campaign with a COUPON tag (and as many codes) on a fresh server, beside the plain one (run first when
    // `campaign-send` was not asked for), and gives its rate as a share of the plain rate (bar ≥ 80 %).
    // `campaign-send-recommend` does the same with `*|RECOMMEND:<id>:3|*` and a recommender trained on one
    // purchase per recipient (issue 14, bar ≥ 80 %). `campaign-send-transactional` (PostgreSQL) sends it while a
    // shop's order confirmations come in (BENCH_TRANSACTIONAL_PER_SEC calls a second, default 50), and tells how
    // long their mail waited behind the campaign (issue 11: each origin its fair share).
    const variants = ['coupons', 'recommend', 'transactional'] as const
    if (want('campaign-send') || variants.some((v) => want(`campaign-send-${v}`))) {
      const sink = await startPostfixSink()
      if (!sink) throw new Error('smtp-sink not found: apt-get install postfix (only its smtp-sink is used)')
      const dns = await startDnsServer({}, { autoClose: false })
      const recipients = Number(
        process.env.BENCH_CAMPAIGN_RECIPIENTS ?? process.env.BENCH_RECIPIENTS ?? 100_000,
      )
      const run = async (db: BenchDb, opts: CampaignSendOptions) => {
        const server = await startServerProcess(db, pgUrl, {
          SMTP_URL: sink.url,
          DNS_SERVERS: dns.address,
          // The recommend variant serves its product feed from 127.0.0.1.
          ...(opts.recommend ? { ALLOW_PRIVATE_NETWORK: '1' } : {}),
        })
        try {
          const publish = (records: { type: string; host: string; value: string }[]) =>
            dns.setZone(zoneOf(records))
          return await benchCampaignSend(server, sink, publish, recipients, opts)
        } finally {
          await server.stop()
        }
      }
      try {
        for (const db of benchDbs) {
          if (db === 'postgres' && !pgUrl) continue
          const { value: plain, ceiling } = await bracketed(() => run(db, {}))
          results[`campaign-send.${db}`] = {
            ...plain,
            rsa2048Ceiling: ceiling,
            shareOfRsaCeiling: shareOf(ceiling, plain.msgPerSec),
          }
          for (const variant of variants) {
            if (!want(`campaign-send-${variant}`)) continue
            if (variant === 'transactional' && db !== 'postgres') continue
            const opts: CampaignSendOptions =
              variant === 'transactional' ? { transactionalPerSec } : { [variant]: true }
            const { value: figures, ceiling: itsCeiling } = await bracketed(() => run(db, opts))
            results[`campaign-send-${variant}.${db}`] = {
              ...figures,
              rsa2048Ceiling: itsCeiling,
              shareOfRsaCeiling: shareOf(itsCeiling, figures.msgPerSec),
              msgPerSecVsPlain: `${Math.round((100 * figures.msgPerSec) / plain.msgPerSec)} %`,
              serverCpuVsPlain: `${Math.round((100 * figures.serverCpuMsPerMsg) / plain.serverCpuMsPerMsg)} %`,
            }
          }
        }
      } finally {
        sink.stop()
        await dns.close()
      }
    }
    // BENCH_STATS_EVENTS sizes the campaign (default 1,000,000 events); PostgreSQL only.
    if (want('campaign-stats')) {
      if (!pgUrl) throw new Error('campaign-stats needs PostgreSQL')
      const server = await startServerProcess('postgres', pgUrl)
      try {
        results['campaign-stats.postgres'] = await benchCampaignStats(server, pgUrl)
      } finally {
        await server.stop()
      }
    }
    // BENCH_TRACKING_MESSAGES distinct messages (default 100,000); the bench starts its own servers.
    if (want('tracking')) {
      for (const db of benchDbs) {
        if (db === 'postgres' && !pgUrl) continue
        results[`tracking.${db}`] = await benchTracking(db, pgUrl, seconds)
      }
    }
    // BENCH_TRANSACTIONS purchases (default 100,000) through transaction-bulk, in calls of 1,000.
    if (want('transactions')) {
      const total = Number(process.env.BENCH_TRANSACTIONS ?? 100_000)
      for (const db of benchDbs) {
        if (db === 'postgres' && !pgUrl) continue
        const server = await startServerProcess(db, pgUrl)
        try {
          results[`transactions.${db}`] = await benchTransactions(server, total)
        } finally {
          await server.stop()
        }
      }
    }
    // BENCH_FEED_ITEMS products (default 49,999: the most a feed may hold) in one Heureka XML file.
    if (want('feed-refresh')) {
      const items = Number(process.env.BENCH_FEED_ITEMS ?? 49_999)
      for (const db of benchDbs) {
        if (db === 'postgres' && !pgUrl) continue
        const server = await startServerProcess(db, pgUrl, { ALLOW_PRIVATE_NETWORK: '1' })
        try {
          results[`feed-refresh.${db}`] = await benchFeedRefresh(server, items)
        } finally {
          await server.stop()
        }
      }
    }
    // BENCH_RECS_ITEMS transaction items (default 1,000,000) over BENCH_RECS_PRODUCTS products (default
    // 10,000): training time (bar ≤ 60 s) and recommendation latency at 64 connections; PostgreSQL only.
    if (want('recommenders')) {
      if (!pgUrl) throw new Error('recommenders needs PostgreSQL')
      const server = await startServerProcess('postgres', pgUrl)
      try {
        results['recommenders.postgres'] = await benchRecommenders(server, pgUrl, seconds)
      } finally {
        await server.stop()
      }
    }
    // BENCH_AUTOMATION_RUNS subscribers (default 100,000) through a 6-node pipeline, in this process.
    if (want('automation')) {
      for (const db of benchDbs) {
        if (db === 'postgres' && !pgUrl) continue
        results[`automation.${db}`] = await benchAutomation(db, pgUrl)
      }
    }
  } finally {
    cluster?.stop()
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
  const dir = path.join(import.meta.dirname, 'results')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, `${results.date as string}.json`.replace(/:/g, '-')),
    JSON.stringify(results, null, 2),
  )
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
