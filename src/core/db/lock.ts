import fs from 'node:fs'
import path from 'node:path'

/**
 * The embedded database can be opened by one process at a time (PGlite has no locking of its own and a second
 * writer corrupts it), so its owner leaves its pid in a lock file.
 */
export class DatabaseBusyError extends Error {
  constructor(
    public readonly dataDir: string,
    public readonly pid: number,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by a running Tidings process (pid ${pid}). ` +
        'Stop it first, or use the admin API (ADMIN_KEY) while it runs.',
    )
  }
}

export interface DataDirLock {
  release(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Which process `pid` is, beyond its number: this boot's id and the process's start time (Linux's /proc;
 * undefined elsewhere). A lock left by a killed owner names a pid that, after a reboot or in a container, soon
 * belongs to another process, which `alive` alone took for the owner: the database stayed "in use" until
 * someone removed the lock by hand.
 */
export function processStamp(pid: number): string | undefined {
  try {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // starttime is field 22; the command name (field 2, in parentheses) may hold spaces, so count from its end.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    return start ? `${boot}:${start}` : undefined
  } catch {
    return undefined
  }
}

/** What a lock file holds: the owner's pid, and its stamp where there is one. */
export function lockText(pid: number): string {
  const stamp = processStamp(pid)
  return stamp ? `${pid} ${stamp}` : String(pid)
}

/** Whether the owner a lock file names still runs: its pid is alive and, when the file has a stamp, is that process. */
function ownerRuns(pid: number, stamp: string | undefined): boolean {
  if (!alive(pid)) return false
  if (stamp === undefined) return true // a lock written before stamps (or where /proc is missing)
  const now = processStamp(pid)
  return now === undefined || now === stamp
}

/** Blocks this thread for `ms` (start-up only: the lock is taken before anything else runs). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Creates `file` holding `text` only if it does not exist, all at once: written under another name first and
 * linked into place, so that no process ever reads it empty (a lock read empty would look stale). False when the
 * file exists.
 */
function createWith(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, text)
  try {
    fs.linkSync(tmp, file)
    return true
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    // A file system without hard links (some network and FUSE mounts): created exclusively, then written.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') return createExclusive(file, text)
    throw err
  } finally {
    fs.unlinkSync(tmp)
  }
}

function createExclusive(file: string, text: string): boolean {
  try {
    fs.writeFileSync(file, text, { flag: 'wx' })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

/** The text of a lock file; undefined when the file is gone meanwhile. */
function textIn(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** A takeover guard older than this was left by a process that died while removing a stale lock. */
const STALE_GUARD_MS = 10_000
/** Tries before giving up: each waits up to 20 ms for another start's takeover. */
const ATTEMPTS = 100

export function acquireDataDirLock(dataDir: string): DataDirLock {
  const file = path.join(dataDir, 'tidings.lock')
  const guard = `${file}.takeover`
  const own = lockText(process.pid)
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createWith(file, own)) {
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8') === own) fs.unlinkSync(file)
          } catch {
            // already gone
          }
        },
      }
    }
    const text = textIn(file)
    if (text === undefined) continue // released meanwhile: try again
    const [first, stamp] = text.trim().split(' ')
    const pid = Number(first)
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && ownerRuns(pid, stamp)) {
      throw new DatabaseBusyError(dataDir, pid)
    }
    // Stale: its owner is gone. Only the holder of the guard removes it: two starts that each removed it would
    // each remove the lock the other had just taken, and both would open the database.
    if (!createWith(guard, String(process.pid))) {
      try {
        if (Date.now() - fs.statSync(guard).mtimeMs > STALE_GUARD_MS) fs.unlinkSync(guard)
      } catch {
        // removed meanwhile
      }
      pause(20)
      continue
    }
    try {
      // Still the stale lock read above, not one another start took since.
      if (textIn(file) === text) fs.unlinkSync(file)
    } finally {
      fs.unlinkSync(guard)
    }
  }
  throw new Error(`could not lock ${dataDir}`)
}
