import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { queryRows } from '../../core/db/sql.js'
import { messages } from '../messages/index.js'
import { trackingLinks } from './tracking.links.js'

describe('a one-click unsubscribe that PostgreSQL aborts to break a deadlock', async () => {
  const t = await startTestApp({ worker: false })
  const listId = (await t.req('POST', '/lists', { body: { name: 'News' } })).body.id as number
  const email = 'petr@example.cz'
  await t.req('POST', `/lists/${listId}/subscribe`, { body: { subscriber_data: { email } } })
  const [m] = await t.ctx.db
    .insert(messages)
    .values({ accountId: t.account.id, kind: 'transactional', email, subject: 'Hello' })
    .returning()
  const url = trackingLinks(t.ctx).unsubscribe(m!.id).slice(t.ctx.config.publicUrl.length)

  it(
    'is run again: the address leaves the list and one event is written',
    { skip: needsSecondConnection },
    async () => {
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // Another transaction holds the membership: the unsubscribe stamps its message, then waits for it.
        await other.query('BEGIN')
        await other.query('UPDATE memberships SET status = status WHERE list_id = $1', [listId])
        const unsubscribe = t.req('POST', url, { key: null })
        await untilLockWait()
        // Now the other wants the message: a deadlock; the unsubscribe, waiting longer, is the one aborted.
        await other.query('UPDATE messages SET subject = subject WHERE id = $1', [m!.id])
        await other.query('COMMIT')
        const res = await unsubscribe
        assert.equal(res.status, 200, res.text)
      })
      const rows = await queryRows<{ status: number; unsubs: number }>(
        t.ctx.db,
        sql`SELECT (SELECT status FROM memberships WHERE list_id = ${listId}) AS status,
                 (SELECT count(*)::int FROM events WHERE message_id = ${m!.id} AND event = 'unsub') AS unsubs`,
      )
      assert.deepEqual(rows[0], { status: 2, unsubs: 1 })
    },
  )
})
