import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { createListeningPipeline } from '../../../test/helpers/listening-pipeline.js'
import { queryRows } from '../../core/db/sql.js'

/** The bulk statements signal the tags each contact gains, compared with its tags before the call. */
describe('bulk tag signals', async () => {
  // No worker: signals stay in the outbox to be read.
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  await createListeningPipeline(t, { type: 'tag', tag: 'any' })

  /** The tag signals written since the last call, as `email: tags`, and the outbox emptied. */
  const taken = async () => {
    const rows = await queryRows<{ email: string; tags: string[] }>(
      t.ctx.db,
      sql`DELETE FROM signals WHERE account_id = ${t.account.id} AND kind = 'tag'
          RETURNING email, payload->'tags' AS tags`,
    )
    return rows.map((r) => `${r.email}: ${[...r.tags].sort().join(',')}`).sort()
  }
  const bulk = async (path: string, method: 'POST' | 'PUT', body: Record<string, unknown>) => {
    const res = await t.req(method, `/lists/${list}/${path}`, { body })
    assert.equal(res.status, 200, res.text)
  }

  it('subscribe-bulk: a new contact gains each tag once, an existing one only the tags it lacked', async () => {
    await bulk('subscribe-bulk', 'POST', {
      subscriber_data: [
        { email: 'new@x.cz', tags: ['a', 'b', 'a'] },
        { email: 'kept@x.cz', tags: ['a', 'b'] },
      ],
    })
    assert.deepEqual(await taken(), ['kept@x.cz: a,b', 'new@x.cz: a,b'])
    await bulk('subscribe-bulk', 'POST', {
      subscriber_data: [
        { email: 'kept@x.cz', tags: ['b', 'c'] },
        { email: 'new@x.cz', tags: ['a'] },
        { email: 'other@x.cz' },
      ],
    })
    assert.deepEqual(await taken(), ['kept@x.cz: c'])
  })

  it('update-subscribers-bulk: only the tags a member lacked, nothing when it had them all', async () => {
    await bulk('update-subscribers-bulk', 'PUT', {
      subscriber_data: [
        { email: 'kept@x.cz', tags: ['c', 'a'] },
        { email: 'new@x.cz', tags: ['b', 'd'] },
      ],
    })
    // The second import replaced their tags: kept@ held b and c, new@ only a.
    assert.deepEqual(await taken(), ['kept@x.cz: a', 'new@x.cz: b,d'])
    await bulk('update-subscribers-bulk', 'PUT', {
      subscriber_data: [{ email: 'new@x.cz', tags: ['d', 'b'] }],
    })
    assert.deepEqual(await taken(), [])
  })
})
