import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { logRoundFailure } from './round-failure.js'

function recordingLog() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = []
  return {
    lines,
    warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', msg, fields }),
    error: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'error', msg, fields }),
  }
}

describe('logRoundFailure', () => {
  it('warns of a database that was away or a conflict it aborted, and reports anything else as an error', () => {
    const log = recordingLog()
    const restart = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    })
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' })
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')")
    // Log calls are typed by pino's overloads; the recorder takes the one form used here.
    const as = log as unknown as Parameters<typeof logRoundFailure>[0]
    logRoundFailure(as, restart, 'automation engine loop')
    logRoundFailure(as, deadlock, 'webhook delivery loop', { batch: 3 })
    logRoundFailure(as, bug, 'recommender trainer')
    assert.deepEqual(
      log.lines.map((l) => [l.level, l.msg]),
      [
        ['warn', 'automation engine loop: the database was unavailable; the next round tries again'],
        ['warn', 'webhook delivery loop: the database was unavailable; the next round tries again'],
        ['error', 'recommender trainer'],
      ],
    )
    assert.equal(log.lines[1]!.fields.batch, 3)
    assert.equal(log.lines[2]!.fields.err, bug)
  })
})
