import { api, load, round, timeRuns } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/**
 * Issue 2 figures: bulk update of 3,000 existing subscribers, a 5,000-row subscribers page, and subscriber
 * lookups/s at 64 connections (compared with a bare Fastify route by the caller). Also the import rate of
 * subscribe-bulk while seeding.
 */
export interface SubscriberFigures {
  seedRows: number
  importRowsPerSec: number
  bulkUpdate3000Ms: { median: number; p95: number }
  page5000Ms: { median: number; p95: number }
  lookup: { reqPerSec: number; p99Ms: number; non2xx: number }
}

const SEED = 30_000
const BATCH = 3_000

function person(i: number) {
  return {
    email: `user${i}@bench.example`,
    name: `Name${i}`,
    surname: `Surname${i}`,
    city: 'Praha',
    tags: ['bench', i % 2 ? 'odd' : 'even'],
    custom_fields: { plan: i % 3 ? 'basic' : 'pro', score: i },
  }
}

export async function benchSubscribers(
  server: ServerProcess,
  lookupSeconds: number,
): Promise<SubscriberFigures> {
  const { url, key } = server
  const list = (await api(url, key, 'POST', '/lists', { name: 'Bench' })).json as { id: number }
  const t0 = process.hrtime.bigint()
  for (let start = 0; start < SEED; start += BATCH) {
    const rows = Array.from({ length: BATCH }, (_, j) => person(start + j))
    await api(url, key, 'POST', `/lists/${list.id}/subscribe-bulk`, { subscriber_data: rows })
  }
  const seedSec = Number(process.hrtime.bigint() - t0) / 1e9

  const bulk = await timeRuns(10, async (i) => {
    const offset = ((i + 10) % 10) * BATCH
    const rows = Array.from({ length: BATCH }, (_, j) => ({
      email: `user${offset + j}@bench.example`,
      name: `Renamed${i}-${j}`,
      custom_fields: { plan: 'pro', run: i },
      tags: ['bench', `run${i}`],
    }))
    await api(url, key, 'PUT', `/lists/${list.id}/update-subscribers-bulk`, { subscriber_data: rows })
  })

  const page = await timeRuns(10, async (i) => {
    const n = ((i + 10) % 6) + 1
    await api(url, key, 'GET', `/lists/${list.id}/subscribers?per_page=5000&page=${n}`)
  })

  const lookup = await load(
    `${url}/lists/${list.id}/subscriber/user123@bench.example`,
    { key },
    64,
    lookupSeconds,
  )
  return {
    seedRows: SEED,
    importRowsPerSec: Math.round(SEED / seedSec),
    bulkUpdate3000Ms: { median: bulk.median, p95: bulk.p95 },
    page5000Ms: { median: page.median, p95: page.p95 },
    lookup: { reqPerSec: lookup.reqPerSec, p99Ms: round(lookup.p99Ms), non2xx: lookup.non2xx },
  }
}
