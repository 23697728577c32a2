import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createTestDatabase } from '../../../test/helpers/databases.js'
import type { DbHandle } from '../db/client.js'
import { createJobQueue } from './queue.js'

declare module './queue.js' {
  interface JobMap {
    'test.blip': { n: number }
    'test.burst': { n: number }
  }
}

describe('job queue (pg-boss)', async () => {
  const database = await createTestDatabase()
  let failing = false
  // The database as pg-boss sees it, able to drop out just for the statement that completes a job.
  const flaky: DbHandle = {
    ...database.handle,
    executeSql: async (text, values) => {
      if (failing && /SET completed_on = now\(\)/.test(text))
        throw new Error('Connection terminated unexpectedly')
      return database.handle.executeSql(text, values)
    },
  }
  const errors: Error[] = []
  const queue = createJobQueue(flaky, (err) => errors.push(err))
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await queue.stop()
    await database.handle.close()
    await database.drop()
  })

  it('reports the failure instead of ending the process with an unhandled rejection', async () => {
    await queue.start(['test.blip'])
    const ran: number[] = []
    await queue.work('test.blip', async (data) => {
      ran.push(data.n)
    })
    failing = true
    await queue.send('test.blip', { n: 1 })
    for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(50)
    await sleep(100)
    assert.deepEqual(ran, [1])
    assert.match(errors[0]?.message ?? '', /Connection terminated/)
    assert.deepEqual(unhandled, [])
    failing = false
  })

  it('fetches again at once after a full fetch instead of sleeping out the polling interval', async () => {
    await queue.start(['test.burst'])
    for (let n = 0; n < 20; n++) await queue.send('test.burst', { n })
    const ran: number[] = []
    // One job per fetch and an hour between polls: only the immediate fetch after a full one can run them all.
    // What that is worth in messages per second is the transactional benchmark's figure (README, Benchmarks).
    await queue.work(
      'test.burst',
      async (data) => {
        ran.push(data.n)
      },
      { batchSize: 1, pollingIntervalSeconds: 3600 },
    )
    for (let i = 0; i < 600 && ran.length < 20; i++) await sleep(50)
    assert.deepEqual(
      [...ran].sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, n) => n),
    )
  })
})
