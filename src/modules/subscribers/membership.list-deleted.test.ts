import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { contactOf, createList } from './subscribers.write.test-helpers.js'

describe('a subscribe or unsubscribe on a list deleted while it runs', async () => {
  const t = await startTestApp({ worker: false })

  it('answers 404 naming the list, and writes nothing', { skip: needsSecondConnection }, async () => {
    const listId = await createList(t, { name: 'Going' })
    await withSecondConnection(t, async ({ other, untilLockWait }) => {
      // The delete has passed the request's check of the list but not yet committed.
      await other.query('BEGIN')
      await other.query('DELETE FROM lists WHERE id = $1', [listId])
      const res = t.req('POST', `/lists/${listId}/subscribe`, {
        body: { subscriber_data: { email: 'late@example.cz' } },
      })
      // The membership's reference to the list waits for the delete, then finds the list gone.
      await untilLockWait()
      await other.query('COMMIT')
      const answer = await res
      assert.equal(answer.status, 404, answer.text)
      assert.deepEqual(answer.body, { message: 'List not found' })
    })
    assert.equal(await contactOf(t, 'late@example.cz'), undefined)
  })

  it('an unsubscribe answers 404 naming the list, not a 500', { skip: needsSecondConnection }, async () => {
    const listId = await createList(t, { name: 'Leaving' })
    const sub = await t.req('POST', `/lists/${listId}/subscribe`, {
      body: { subscriber_data: { email: 'leaver@example.cz' } },
    })
    assert.equal(sub.status, 200, sub.text)
    await withSecondConnection(t, async ({ other, untilLockWait }) => {
      // The delete (and its cascade to the membership) has passed the request's checks but not yet committed.
      await other.query('BEGIN')
      await other.query('DELETE FROM lists WHERE id = $1', [listId])
      const res = t.req('DELETE', `/lists/${listId}/unsubscribe`, { body: { email: 'leaver@example.cz' } })
      // The membership's update waits for the delete, then finds the row gone (a TypeError and 500 before).
      await untilLockWait()
      await other.query('COMMIT')
      const answer = await res
      assert.equal(answer.status, 404, answer.text)
      assert.deepEqual(answer.body, { message: 'List not found' })
    })
  })
})
