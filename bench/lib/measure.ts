import fs from 'node:fs'
import autocannon from 'autocannon'

export interface Timing {
  median: number
  p95: number
  min: number
  runs: number
}

/** Runs fn `runs` times after `warmup` unmeasured runs; milliseconds. */
export async function timeRuns(runs: number, fn: (i: number) => Promise<void>, warmup = 2): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i)
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint()
    await fn(i)
    ms.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  ms.sort((a, b) => a - b)
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!
  return { median: round(at(0.5)), p95: round(at(0.95)), min: round(ms[0]!), runs }
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

export interface LoadResult {
  reqPerSec: number
  p99Ms: number
  non2xx: number
  errors: number
}

/** autocannon against one URL on loopback, bounded by duration. */
export async function load(
  url: string,
  headers: Record<string, string>,
  connections = 64,
  seconds = 10,
): Promise<LoadResult> {
  const r = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1 })
  return {
    reqPerSec: Math.round(r.requests.average),
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  }
}

export async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return { status: res.status, json: text ? JSON.parse(text) : undefined }
}

/** CPU time (ms, user + system) a process has used so far, from /proc (0 where there is none). */
export function processCpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command; in clock ticks (100/s).
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** CPU time (ms) the whole machine has spent busy so far, every core and process together, from /proc/stat. */
export function machineBusyMs(): number {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)
    return busy * 10
  } catch {
    return 0
  }
}
