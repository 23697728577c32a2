import { existsSync, readFileSync } from 'node:fs'
import { obj } from './calls.js'
import { type Proc } from './processes.js'

// The server processes' error- and warn-level log lines, grouped for the report.

export interface LogGroup {
  count: number
  procs: Map<string, number>
  example: Record<string, unknown>
}

/** A short, stable signature of a logged error: its type and the database's own words (after the SQL). */
export function errSignature(err: Record<string, unknown>): string {
  const m = String(err.message ?? '')
  const tail = m.length > 300 ? m.slice(m.lastIndexOf(': ') + 2) : m
  return `${String(err.type ?? '')}: ${tail}`
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\d+/g, '#')
}

export function shorten(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n / 2)} … ${s.slice(-n / 2)}` : s
}

export function readLogs(procs: Proc[]) {
  const groups = new Map<string, LogGroup>()
  const nonJson: { proc: string; line: string }[] = []
  let warns = 0
  const warnGroups = new Map<string, number>()
  for (const p of procs) {
    if (!existsSync(p.logFile)) continue
    for (const line of readFileSync(p.logFile, 'utf8').split('\n')) {
      if (!line.trim()) continue
      let j: Record<string, unknown>
      try {
        j = JSON.parse(line) as Record<string, unknown>
      } catch {
        nonJson.push({ proc: p.name, line: line.slice(0, 300) })
        continue
      }
      const level = Number(j.level)
      if (level === 40) {
        warns++
        const m = String(j.msg)
        warnGroups.set(m, (warnGroups.get(m) ?? 0) + 1)
      }
      if (!(level >= 50)) continue
      const msg = String(j.msg ?? '(no msg)')
      const key = j.err ? `${msg} | ${errSignature(obj(j.err))}` : msg
      let g = groups.get(key)
      if (!g) groups.set(key, (g = { count: 0, procs: new Map(), example: j }))
      g.count++
      g.procs.set(p.name, (g.procs.get(p.name) ?? 0) + 1)
    }
  }
  return { groups, nonJson, warns, warnGroups }
}
