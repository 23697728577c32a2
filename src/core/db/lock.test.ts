import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { acquireDataDirLock, DatabaseBusyError, lockText, processStamp } from './lock.js'

/** A pid no process has (above Linux's pid_max). */
const DEAD_PID = 2 ** 22 + 1
/** A live process that is not this one. */
const OTHER_PID = process.ppid

function dataDir(): { dir: string; lock: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-lock-'))
  return { dir, lock: path.join(dir, 'tidings.lock') }
}

describe('the embedded database lock', () => {
  it('is taken when free or stale, refused while its owner lives, and released only by its owner', () => {
    const { dir, lock } = dataDir()
    const held = acquireDataDirLock(dir)
    assert.equal(fs.readFileSync(lock, 'utf8'), lockText(process.pid))
    held.release()
    assert.equal(fs.existsSync(lock), false)

    fs.writeFileSync(lock, String(DEAD_PID))
    const taken = acquireDataDirLock(dir)
    assert.equal(fs.readFileSync(lock, 'utf8'), lockText(process.pid))
    taken.release()

    fs.writeFileSync(lock, String(OTHER_PID))
    assert.throws(
      () => acquireDataDirLock(dir),
      (e) => e instanceof DatabaseBusyError && e.pid === OTHER_PID,
    )
    assert.deepEqual(fs.readdirSync(dir), ['tidings.lock'], 'nothing else left behind')
  })

  it("is taken when its pid now belongs to another process (a reboot, a container), refused while the owner's runs", () => {
    const { dir, lock } = dataDir()
    const stamp = processStamp(OTHER_PID)
    assert.ok(stamp, 'this test runs where /proc tells a process apart')
    // The owner's pid, alive, but started at another time (or in another boot) than the process now holding it.
    fs.writeFileSync(lock, `${OTHER_PID} ${stamp}0`)
    acquireDataDirLock(dir).release()
    fs.writeFileSync(lock, lockText(OTHER_PID))
    assert.throws(
      () => acquireDataDirLock(dir),
      (e) => e instanceof DatabaseBusyError && e.pid === OTHER_PID,
    )
  })

  it('is taken where the file system has no hard links', () => {
    const { dir, lock } = dataDir()
    const link = fs.linkSync
    fs.linkSync = () => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' })
    }
    try {
      acquireDataDirLock(dir).release()
      fs.writeFileSync(lock, String(OTHER_PID))
      assert.throws(() => acquireDataDirLock(dir), DatabaseBusyError)
    } finally {
      fs.linkSync = link
    }
  })

  it('leaves alone a lock another start took after this one found the old one stale', () => {
    // Two starts after a crash: both read the dead owner's pid; the other one then replaces the stale lock with
    // its own before this one acts on what it read. Removing "the stale lock" now would remove the other's, and
    // both processes would open the database.
    const { dir, lock } = dataDir()
    fs.writeFileSync(lock, String(DEAD_PID))
    const read = fs.readFileSync
    let raced = false
    fs.readFileSync = ((...args: Parameters<typeof read>) => {
      const out = read(...args)
      if (!raced && String(args[0]) === lock) {
        raced = true
        fs.writeFileSync(lock, String(OTHER_PID))
      }
      return out
    }) as typeof read
    try {
      assert.throws(
        () => acquireDataDirLock(dir),
        (e) => e instanceof DatabaseBusyError && e.pid === OTHER_PID,
      )
    } finally {
      fs.readFileSync = read
    }
    assert.ok(raced)
    assert.equal(fs.readFileSync(lock, 'utf8'), String(OTHER_PID), "the other start's lock stays")
  })
})
