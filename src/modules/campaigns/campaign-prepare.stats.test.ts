import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { queryOne } from '../../core/db/sql.js'
import { startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { prepareCampaign } from './campaign-prepare.js'
import { campaignRow, createCampaign, listWith, sendingDomain } from './campaign-send.test-helpers.js'

const people = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@example.cz` }))

/** The planner's row estimate of the send ledger: what its last ANALYZE counted (-1 or 0 before any). */
async function ledgerEstimate(t: TestApp): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'messages'::regclass`,
  )
  return row!.n
}

/** Sends a campaign to `list` and runs its preparing step here (no worker runs in this app). */
async function freeze(t: TestApp, list: number): Promise<number> {
  const id = await createCampaign(t, t.account, [list])
  assert.equal((await t.req('POST', `/campaigns/${id}/send`)).status, 200)
  assert.equal(await prepareCampaign(t.ctx, id), true)
  assert.equal((await campaignRow(t, id))?.status, 2)
  return id
}

describe('campaign prepare: the ledger statistics after a freeze', async () => {
  const t = await startTestApp({ worker: false, config: { sendThreads: 0 } })
  await sendingDomain(t, t.account)
  const small = await listWith(t, t.account, people(10, 's'))
  const big = await listWith(t, t.account, people(1200, 'b'))

  it('a freeze that grows the ledger by a tenth or more refreshes them at once; others leave them', async () => {
    const empty = await ledgerEstimate(t)
    assert.ok(empty <= 0, `a new ledger has no estimate yet (${empty})`)
    // Ten recipients: too few to be worth an ANALYZE.
    await freeze(t, small)
    assert.equal(await ledgerEstimate(t), empty)
    // 1,200 on a ledger of ten: the prepared statements' plans (made for ten rows) are made again.
    await freeze(t, big)
    assert.equal(await ledgerEstimate(t), 1210)
    // 1,200 more on a ledger of 21,210 grow it by less than a tenth: left to autovacuum.
    await t.ctx.db.execute(sql`INSERT INTO messages (account_id, kind, email, status)
      SELECT ${t.account.id}, 'transactional', 'x' || g || '@example.cz', 1 FROM generate_series(1, 20000) g`)
    await t.ctx.db.execute(sql`ANALYZE messages`)
    assert.equal(await ledgerEstimate(t), 21210)
    await freeze(t, big)
    assert.equal(await ledgerEstimate(t), 21210)
  })
})
