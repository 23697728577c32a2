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

export function acquireDataDirLock(dataDir: string): DataDirLock {
  const file = path.join(dataDir, 'tidings.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' })
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.unlinkSync(file)
          } catch {
            // already gone
          }
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = Number(fs.readFileSync(file, 'utf8'))
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DatabaseBusyError(dataDir, pid)
      }
      fs.unlinkSync(file) // stale: its owner is gone
    }
  }
  throw new Error(`could not lock ${dataDir}`)
}
