import fs from 'node:fs'
import { processCpuMs } from './measure.js'

/**
 * CPU (ms) of groups of processes over a stretch of time, sampled from /proc every `everyMs` so that processes
 * which start during it (a pool's new PostgreSQL backend) count too. The machine is shared: the whole machine's
 * busy time says little, while the processes the bench started (and the database's backends it is served by)
 * can be named.
 */
export interface CpuGroups {
  /** CPU per group since start(); a process that ended between two samples loses its last interval. */
  stop(): Record<string, number>
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
  } catch {
    return ''
  }
}

/** Samples every process whose command line `groupOf` puts in a group (undefined: not counted). */
export function sampleCpuGroups(
  groupOf: (pid: number, cmd: string) => string | undefined,
  everyMs = 100,
): CpuGroups {
  const first = new Map<number, number>()
  const last = new Map<number, number>()
  const groups = new Map<number, string>()
  // Processes of no group, not read again; a PostgreSQL backend names its database only once it is set up.
  const others = new Set<number>()
  const scan = (initial: boolean) => {
    for (const name of fs.readdirSync('/proc')) {
      const pid = Number(name)
      if (!Number.isInteger(pid)) continue
      if (others.has(pid)) continue
      let group = groups.get(pid)
      if (group === undefined) {
        const cmd = cmdline(pid)
        group = groupOf(pid, cmd)
        if (group === undefined) {
          if (!cmd.startsWith('postgres')) others.add(pid)
          continue
        }
        groups.set(pid, group)
      }
      const cpu = processCpuMs(pid)
      // A process first seen after the start counts from zero: it was born within the stretch.
      if (!first.has(pid)) first.set(pid, initial ? cpu : 0)
      if (cpu > 0) last.set(pid, cpu)
    }
  }
  scan(true)
  const timer = setInterval(() => scan(false), everyMs)
  return {
    stop() {
      clearInterval(timer)
      scan(false)
      const out: Record<string, number> = {}
      for (const [pid, group] of groups) {
        if (!first.has(pid)) continue
        const used = (last.get(pid) ?? 0) - (first.get(pid) ?? 0)
        out[group] = (out[group] ?? 0) + Math.max(0, used)
      }
      return out
    },
  }
}
