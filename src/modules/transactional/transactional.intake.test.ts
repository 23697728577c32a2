import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { createTransactionalIntake } from './transactional.intake.js'
import { addDomain, addSuppressed, baseMessage, messagesOfBatch } from './transactional.test-helpers.js'
import { prepareMessage } from './transactional.validate.js'
import type { MessageInput } from './transactional.schemas.js'

const SEND = '/transactional/send-message'

describe('transactional intake: calls that arrive together share one statement', async () => {
  // No worker: the rows stay queued, so what the intake wrote is what the test reads. A relay is configured
  // (never reached) so that only a verified domain may send, as in production.
  const t = await startTestApp({ worker: false, config: { smtpUrl: 'smtp://127.0.0.1:9' } })
  const a = await t.createAccount('paid')
  const b = await t.createAccount('paid')
  await addDomain(t, a.id, 'a-shop.example')
  await addDomain(t, b.id, 'b-shop.example')
  await addSuppressed(t, a.id, 'gone@example.cz')
  // The same address suppressed for one account only: the batched lookup must keep accounts apart.
  await addSuppressed(t, b.id, 'shared@example.cz')

  it('answers every one of many concurrent calls of two accounts, each with its own rows', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => {
      const account = i % 2 === 0 ? a : b
      const from = i % 2 === 0 ? 'info@a-shop.example' : 'info@b-shop.example'
      const to = [{ email: `person${i}@example.cz`, name: `P${i}` }, { email: 'shared@example.cz' }]
      if (i % 4 === 0) to.push({ email: 'gone@example.cz', name: '' })
      return {
        account,
        i,
        req: t.req('POST', SEND, {
          key: account.key,
          body: { message: baseMessage(from, { to, subject: `S${i}` }) },
        }),
      }
    })
    const ids = new Set<number>()
    for (const { account, i, req } of calls) {
      const res = await req
      assert.equal(res.status, 200, JSON.stringify(res.body))
      const { results } = res.body
      ids.add(results.id)
      const expected = [`person${i}@example.cz`]
      // a's calls: shared@ is live (suppressed only for b), gone@ is suppressed; b's: shared@ is suppressed.
      if (account === a) expected.push('shared@example.cz')
      assert.equal(results.total_accepted_recipients, expected.length, `call ${i}`)
      assert.equal(
        results.total_rejected_recipients,
        2 - expected.length + (i % 4 === 0 ? 1 : 0),
        `call ${i}`,
      )
      const rows = await messagesOfBatch(t, results.id)
      assert.deepEqual(
        rows.map((r) => [r.email, r.accountId, r.subject]).sort(),
        expected.map((e) => [e, account.id, `S${i}`]).sort(),
        `call ${i}`,
      )
    }
    assert.equal(ids.size, 40, 'one body row per call')
    const bodies = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM message_batches WHERE subject LIKE 'S%'`,
    )
    assert.equal(bodies?.n, 40)
  })

  it('fails only the call the database refuses; the others of its group are written and answered', async () => {
    const intake = createTransactionalIntake(t.ctx)
    const call = (i: number, html: string) => ({
      accountId: a.id,
      templateId: null,
      prepared: prepareMessage(
        baseMessage('info@a-shop.example', {
          subject: `G${i}`,
          html,
          to: [{ email: `group${i}@example.cz` }],
        }) as unknown as MessageInput,
      ),
      html,
    })
    // Made in one turn: one run, one group. A NUL character is refused by the database (text and jsonb alike).
    const settled = await Promise.allSettled(
      [0, 1, 2, 3, 4].map((i) => intake(call(i, i === 2 ? '<p>bad \u0000 byte</p>' : `<p>${i}</p>`))),
    )
    assert.equal(settled[2]!.status, 'rejected')
    for (const i of [0, 1, 3, 4]) {
      const s = settled[i]!
      assert.equal(s.status, 'fulfilled', `call ${i}: ${s.status === 'rejected' ? String(s.reason) : ''}`)
      const rows = await messagesOfBatch(t, s.value.bodyId)
      assert.deepEqual(
        rows.map((r) => r.email),
        [`group${i}@example.cz`],
      )
    }
    const bad = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM messages WHERE email = 'group2@example.cz'`,
    )
    assert.equal(bad?.n, 0, 'the refused call wrote nothing')
  })

  it('a sender domain removed through this process refuses the next call at once, despite the cache', async () => {
    await addDomain(t, a.id, 'c-shop.example')
    const call = () =>
      t.req('POST', SEND, { key: a.key, body: { message: baseMessage('info@c-shop.example') } })
    assert.equal((await call()).status, 200)
    const removed = await t.req('DELETE', '/domains/c-shop.example', { key: a.key })
    assert.equal(removed.status, 200, JSON.stringify(removed.body))
    const refused = await call()
    assert.equal(refused.status, 422, JSON.stringify(refused.body))
    assert.ok(refused.body.errors['message.from_email'])
  })
})
