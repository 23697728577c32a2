import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { heurekaItem } from '../src/modules/feeds/feed-server.test-helpers.js'
import { api, processCpuMs, round } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/**
 * Issue 14 figure: a refresh of a Heureka XML feed of ITEMS products served from 127.0.0.1, from the
 * request to the feed reading `ok` (download, streamed parse, staging, the swap), and the server process's
 * RSS before and at its peak (sampled every 50 ms). The server must run with ALLOW_PRIVATE_NETWORK=1.
 */
export interface FeedRefreshFigures {
  items: number
  feedMb: number
  refreshSec: number
  itemsPerSec: number
  serverCpuMs: number
  rssBeforeMb: number
  peakRssMb: number
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/** The feed file, built before the clock starts: the figure is the server's, not the generator's. */
function feedBody(items: number): Buffer {
  const parts = ['<?xml version="1.0" encoding="utf-8"?>\n<SHOP>\n']
  for (let i = 0; i < items; i++)
    parts.push(
      heurekaItem({
        id: `sku-${i}`,
        title: `Product ${i} – a thing worth buying`,
        price: `${(i % 5000) + 0.9}`,
        category: `Bench | Group ${i % 50} | Leaf ${i % 500}`,
      }),
    )
  parts.push('</SHOP>\n')
  return Buffer.from(parts.join(''))
}

export async function benchFeedRefresh(server: ServerProcess, items = 49_999): Promise<FeedRefreshFigures> {
  const body = feedBody(items)
  const feedServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': body.length }).end(body)
  })
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve))
  const { port } = feedServer.address() as AddressInfo
  try {
    const feed = (
      await api(server.url, server.key, 'POST', '/feeds', {
        name: 'bench',
        url: `http://127.0.0.1:${port}/feed.xml`,
      })
    ).json as { id: number }
    await new Promise((r) => setTimeout(r, 1000))
    const rssBefore = rssMb(server.pid)
    let peak = rssBefore
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 50)
    const cpu0 = processCpuMs(server.pid)
    const t0 = process.hrtime.bigint()
    await api(server.url, server.key, 'GET', `/data-feeds/${feed.id}/refresh`)
    let state = ''
    let shown: { state: string; error: string | null; item_count: number } | undefined
    // Bounded: ten minutes at most.
    for (let i = 0; i < 6000 && state !== 'ok' && state !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100))
      shown = (await api(server.url, server.key, 'GET', `/feeds/${feed.id}`)).json as typeof shown
      state = shown!.state
    }
    const sec = Number(process.hrtime.bigint() - t0) / 1e9
    clearInterval(sampler)
    if (state !== 'ok') throw new Error(`feed refresh ended ${state}: ${shown?.error}`)
    if (shown!.item_count !== items) throw new Error(`feed holds ${shown!.item_count} items, not ${items}`)
    return {
      items,
      feedMb: round(body.length / 2 ** 20),
      refreshSec: round(sec, 2),
      itemsPerSec: Math.round(items / sec),
      serverCpuMs: processCpuMs(server.pid) - cpu0,
      rssBeforeMb: Math.round(rssBefore),
      peakRssMb: Math.round(peak),
    }
  } finally {
    await new Promise((r) => feedServer.close(r))
  }
}
