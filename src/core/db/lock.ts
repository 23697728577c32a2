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

/** The pid in a lock file; undefined when the file is gone meanwhile. */
function pidIn(file: string): number | undefined {
  try {
    return Number(fs.readFileSync(file, 'utf8'))
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
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createWith(file, String(process.pid))) {
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.unlinkSync(file)
          } catch {
            // already gone
          }
        },
      }
    }
    const pid = pidIn(file)
    if (pid === undefined) continue // released meanwhile: try again
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
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
      if (pidIn(file) === pid) fs.unlinkSync(file)
    } finally {
      fs.unlinkSync(guard)
    }
  }
  throw new Error(`could not lock ${dataDir}`)
}
