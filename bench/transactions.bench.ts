import { api, processCpuMs, round } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/**
 * Issue 12 figure: `POST /tracker/transaction-bulk` import rate, in calls of 1,000 purchases with
 * ITEMS_PER_ORDER items each, sent one call at a time as a shop's history sync does. A second pass sends the
 * same orders again (every one overwritten, its items replaced). Rates count purchases (the bar's items) and,
 * beside them, their line items.
 */
export interface TransactionFigures {
  transactions: number
  itemsPerTransaction: number
  importTransactionsPerSec: number
  importItemsPerSec: number
  callMs: { median: number; p95: number }
  /** CPU the server process spent per call of 1,000 (PostgreSQL's own work is not in it). */
  serverCpuMsPerCall: number
  overwriteTransactionsPerSec: number
}

const BATCH = 1000
const ITEMS_PER_ORDER = 3

function purchase(i: number) {
  return {
    transaction: {
      order_id: `order-${i}`,
      email: `buyer${i % 20_000}@bench.example`,
      shop: 'bench.example',
      amount: ((i % 500) + 0.99).toFixed(2),
      tax: 21.1,
      shipping: 0.1,
      city: 'Praha',
      country: 'CZ',
      timestamp: 1_767_225_600 + i * 60,
      status: 'completed',
    },
    transaction_items: Array.from({ length: ITEMS_PER_ORDER }, (_, j) => ({
      code: `sku-${(i * 7 + j) % 5000}`,
      title: `Product ${(i * 7 + j) % 5000}`,
      category: 'Bench',
      price: 9.99 + j,
      amount: 1 + j,
      categories: ['Bench', `Group ${j}`],
    })),
  }
}

async function importAll(server: ServerProcess, total: number): Promise<{ sec: number; callMs: number[] }> {
  // Bodies are built before the clock starts: the figure is the server's, not the generator's.
  const bodies = Array.from({ length: Math.ceil(total / BATCH) }, (_, b) => ({
    transaction_data: Array.from({ length: Math.min(BATCH, total - b * BATCH) }, (_, j) =>
      purchase(b * BATCH + j),
    ),
  }))
  const callMs: number[] = []
  const t0 = process.hrtime.bigint()
  for (const body of bodies) {
    const t = process.hrtime.bigint()
    const res = await api(server.url, server.key, 'POST', '/tracker/transaction-bulk', body)
    if ((res.json as { inserts: number }).inserts !== body.transaction_data.length)
      throw new Error(`transaction-bulk answered ${JSON.stringify(res.json)}`)
    callMs.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return { sec: Number(process.hrtime.bigint() - t0) / 1e9, callMs }
}

export async function benchTransactions(server: ServerProcess, total: number): Promise<TransactionFigures> {
  // One unmeasured call first: the server's first statements plan and warm up.
  await api(server.url, server.key, 'POST', '/tracker/transaction-bulk', {
    transaction_data: [{ ...purchase(0), transaction: { ...purchase(0).transaction, order_id: 'warm-up' } }],
  })
  const cpu0 = processCpuMs(server.pid)
  const first = await importAll(server, total)
  const cpu = processCpuMs(server.pid) - cpu0
  const again = await importAll(server, total)
  const ms = first.callMs.sort((a, b) => a - b)
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!
  return {
    transactions: total,
    itemsPerTransaction: ITEMS_PER_ORDER,
    importTransactionsPerSec: Math.round(total / first.sec),
    importItemsPerSec: Math.round((total * ITEMS_PER_ORDER) / first.sec),
    callMs: { median: round(at(0.5)), p95: round(at(0.95)) },
    serverCpuMsPerCall: round(cpu / first.callMs.length),
    overwriteTransactionsPerSec: Math.round(total / again.sec),
  }
}
