import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'

/**
 * Unsubscribe and update-subscriber take the contact before its membership, as subscribe, the bulk statements
 * and erasure do: taking the membership first deadlocked with them under load, past the retries (500s). The
 * other transaction holds the membership; while the call waits for it, the call must already hold the contact.
 */
describe('single-member writes lock the contact before its membership', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email: 'a@x.cz' } } })

  for (const [call, method, path, body] of [
    [
      'update-subscriber',
      'PUT',
      'update-subscriber',
      { email: 'a@x.cz', subscriber_data: { city: 'Brno', status: 2 } },
    ],
    ['unsubscribe', 'DELETE', 'unsubscribe', { email: 'a@x.cz' }],
  ] as const) {
    it(
      `${call}: holds the contact while it waits for the membership`,
      { skip: needsSecondConnection },
      async () => {
        await withSecondConnection(t, async ({ other, untilLockWait }) => {
          await other.query('BEGIN')
          await other.query(`SELECT 1 FROM memberships WHERE list_id = $1 FOR UPDATE`, [list])
          const res = t.req(method, `/lists/${list}/${path}`, { body })
          await untilLockWait()
          await assert.rejects(
            other.query(
              `SELECT 1 FROM contacts WHERE account_id = $1 AND email = 'a@x.cz' FOR UPDATE NOWAIT`,
              [t.account.id],
            ),
            { code: '55P03' },
          )
          await other.query('ROLLBACK')
          assert.equal((await res).status, 200)
        })
      },
    )
  }
})
