import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { queryRows } from '../../core/db/sql.js'

/**
 * Bulk writes lock their contacts in address order, whatever order the call gives them in: a concurrent
 * import that takes them in that order too then waits for this one instead of deadlocking with it. The other
 * transaction holds a; the call lists b before a. While the call waits for a, b must still be free.
 */
describe('bulk subscriber writes lock contacts in address order', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  // b first: the table holds them out of address order, as a plan that reads it in its own order would lock them.
  for (const email of ['b@x.cz', 'a@x.cz'])
    await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email } } })
  // A few hundred contacts, with statistics: PostgreSQL reads the table whole and joins the batch to it by hash,
  // in the table's order (b before a), unless the batch's lookups lock the contacts.
  const filler = (await t.req('POST', '/lists', { body: { name: 'Filler' } })).body.id as number
  await t.req('POST', `/lists/${filler}/subscribe-bulk`, {
    body: { subscriber_data: Array.from({ length: 300 }, (_, i) => ({ email: `f${i}@fill.cz` })) },
  })
  if (!needsSecondConnection) await t.ctx.dbHandle.executeSql('ANALYZE contacts')
  const names = async () =>
    (
      await queryRows<{ email: string; name: string }>(
        t.ctx.db,
        sql`SELECT email, name FROM contacts WHERE account_id = ${t.account.id} AND email LIKE '%@x.cz' ORDER BY email`,
      )
    ).map((r) => `${r.email}: ${r.name}`)

  for (const [call, method, path] of [
    ['subscribe-bulk', 'POST', 'subscribe-bulk'],
    ['update-subscribers-bulk', 'PUT', 'update-subscribers-bulk'],
  ] as const) {
    it(`${call}: b waits behind a, unlocked`, { skip: needsSecondConnection }, async () => {
      const name = `by ${call}`
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        await other.query('BEGIN')
        await other.query(`UPDATE contacts SET name = 'other' WHERE account_id = $1 AND email = 'a@x.cz'`, [
          t.account.id,
        ])
        const bulk = t.req(method, `/lists/${list}/${path}`, {
          body: {
            subscriber_data: [
              { email: 'b@x.cz', name },
              { email: 'a@x.cz', name },
            ],
          },
        })
        await untilLockWait()
        // Fails at once (55P03) if the call locked b before asking for a.
        await other.query(
          `SELECT 1 FROM contacts WHERE account_id = $1 AND email = 'b@x.cz' FOR UPDATE NOWAIT`,
          [t.account.id],
        )
        await other.query('COMMIT')
        const res = await bulk
        assert.equal(res.status, 200, res.text)
      })
      assert.deepEqual(await names(), [`a@x.cz: ${name}`, `b@x.cz: ${name}`])
    })
  }

  it(
    'subscribe-bulk without update_existing: a contact deleted meanwhile is created again',
    { skip: needsSecondConnection },
    async () => {
      await t.req('POST', `/lists/${filler}/subscribe`, { body: { subscriber_data: { email: 'gone@x.cz' } } })
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // An erasure under way: the contact is deleted, not yet committed.
        await other.query('BEGIN')
        await other.query(`DELETE FROM contacts WHERE account_id = $1 AND email = 'gone@x.cz'`, [
          t.account.id,
        ])
        const bulk = t.req('POST', `/lists/${list}/subscribe-bulk`, {
          body: { subscriber_data: [{ email: 'kept@x.cz' }, { email: 'gone@x.cz' }], update_existing: false },
        })
        await untilLockWait()
        await other.query('COMMIT')
        const res = await bulk
        assert.equal(res.status, 200, res.text)
      })
      for (const email of ['kept@x.cz', 'gone@x.cz']) {
        const res = await t.req('GET', `/lists/${list}/subscriber/${email}`)
        assert.equal(res.status, 200, `${email}: ${res.text}`)
      }
    },
  )

  it('subscribe-bulk keeps the order given on the list page', async () => {
    const res = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'z@x.cz' }, { email: 'c@x.cz' }] },
    })
    assert.equal(res.status, 200, res.text)
    const page = await t.req('GET', `/lists/${list}/subscribers`)
    assert.equal(page.status, 200, page.text)
    const emails = (page.body.data as { email: string }[]).map((s) => s.email)
    assert.deepEqual(emails.slice(-2), ['z@x.cz', 'c@x.cz'])
  })
})
