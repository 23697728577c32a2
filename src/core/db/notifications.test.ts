import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import net from 'node:net'
import { coalescedNotifier, listenOnOwnConnection } from './notifications.js'
import { createTestDatabase, testDbKind } from '../../../test/helpers/databases.js'

const connectionsToCut =
  testDbKind() === 'postgres' ? false : 'PostgreSQL only: PGlite has no connection to cut'
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits (bounded: 250 × 20 ms) until `heard()` passes `count`. */
async function until(heard: () => number, count: number): Promise<void> {
  for (let i = 0; i < 250 && heard() < count; i++) await pause(20)
}

describe('notifications between processes', async () => {
  const db = await createTestDatabase()
  after(async () => {
    await db.handle.close()
    await db.drop()
  })

  it('a listener hears each notification on its channel, and none after close', async () => {
    let heard = 0
    let other = 0
    const lost: unknown[] = []
    const listening = await db.handle.listen(
      'test_channel',
      () => heard++,
      (err) => lost.push(err),
    )
    const elsewhere = await db.handle.listen(
      'other_channel',
      () => other++,
      (err) => lost.push(err),
    )
    await db.handle.notify('test_channel')
    await until(() => heard, 1)
    await db.handle.notify('test_channel')
    await until(() => heard, 2)
    assert.equal(heard, 2)
    assert.equal(other, 0, 'another channel hears nothing')
    await listening.close()
    await elsewhere.close()
    await db.handle.notify('test_channel')
    // A stray one would arrive as fast as the two above did.
    await db.handle.notify('other_channel')
    await pause(200)
    assert.equal(heard, 2)
    assert.equal(other, 0)
    assert.deepEqual(lost, [])
  })

  it('refuses a channel name that is no plain identifier', async () => {
    await assert.rejects(db.handle.notify('x; DROP TABLE messages'), /not a plain channel name/)
    await assert.rejects(
      db.handle.listen(
        'Bad-Name',
        () => undefined,
        () => undefined,
      ),
      /not a plain channel name/,
    )
  })

  it(
    'a listening connection cut by the server is opened again, says it may have missed one, and hears on',
    { skip: connectionsToCut },
    async () => {
      let heard = 0
      const lost: unknown[] = []
      const listening = await db.handle.listen(
        'cut_channel',
        () => heard++,
        (err) => lost.push(err),
      )
      try {
        await db.handle.executeSql(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'tidings listen'`,
        )
        // Reopened after a second: the wake for what it missed comes first.
        await until(() => heard, 1)
        assert.equal(lost.length, 1, 'the loss was told')
        assert.equal(heard, 1, 'one wake for what it may have missed')
        await db.handle.notify('cut_channel')
        await until(() => heard, 2)
        assert.equal(heard, 2, 'the reopened connection listens')
      } finally {
        await listening.close()
      }
    },
  )

  it(
    'a listening connection gone silent is found by its periodic statement, opened again, and hears on',
    { skip: connectionsToCut },
    async () => {
      const proxy = await silenceableProxy(db.url!)
      let heard = 0
      const lost: unknown[] = []
      const listening = await listenOnOwnConnection(
        proxy.url,
        'silent_channel',
        () => heard++,
        (err) => lost.push(err),
        { checkEveryMs: 200, statementMs: 300 },
      )
      try {
        proxy.silence()
        // TCP keepalive alone would notice only after 20 s and the system's probes.
        await until(() => lost.length, 1)
        assert.equal(lost.length, 1, 'the silence was noticed')
        await until(() => heard, 1)
        assert.equal(heard, 1, 'reopened, with one wake for what it may have missed')
        await db.handle.notify('silent_channel')
        await until(() => heard, 2)
        assert.equal(heard, 2, 'the new connection listens')
      } finally {
        await listening.close()
        proxy.close()
      }
    },
  )
})

/**
 * A TCP proxy to the test database whose connections can be made to go silent: what a network cut that sends
 * no reset looks like to both ends (no byte passes, no socket closes). New connections pass as before.
 */
async function silenceableProxy(url: string) {
  const target = new URL(url)
  const pairs: net.Socket[][] = []
  const silenced: net.Socket[] = []
  const server = net.createServer((down) => {
    const up = net.connect(Number(target.port || 5432), target.hostname)
    for (const s of [up, down]) s.on('error', () => undefined)
    down.pipe(up)
    up.pipe(down)
    pairs.push([down, up])
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(url)
  proxied.hostname = '127.0.0.1'
  proxied.port = String((server.address() as net.AddressInfo).port)
  return {
    url: proxied.toString(),
    silence() {
      for (const [down, up] of pairs.splice(0)) {
        down!.unpipe(up)
        up!.unpipe(down)
        down!.pause()
        up!.pause()
        silenced.push(down!, up!)
      }
    },
    close() {
      for (const s of [...silenced, ...pairs.flat()]) s.destroy()
      server.close()
    },
  }
}
describe('coalescedNotifier', () => {
  it('sends the first call at once and the calls within the gap as one at its end', async () => {
    let sent = 0
    const notify = coalescedNotifier(async () => void sent++, 100)
    notify()
    assert.equal(sent, 1, 'the first at once')
    for (let i = 0; i < 50; i++) notify()
    assert.equal(sent, 1, 'the rest wait for the gap')
    await until(() => sent, 2)
    assert.equal(sent, 2, 'one for all fifty')
    await pause(250)
    assert.equal(sent, 2, 'nothing more without a call')
  })

  it('drops a notification that fails', async () => {
    let tried = 0
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const notify = coalescedNotifier(() => {
        tried++
        return Promise.reject(new Error('the database is away'))
      }, 10)
      notify()
      await pause(50)
      assert.equal(tried, 1)
      assert.deepEqual(unhandled, [])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})
