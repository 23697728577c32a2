/**
 * Coupon codes drawn by real worker processes: on PostgreSQL two workers send one campaign from one folder,
 * one of them killed (SIGKILL) mid-send and started again; on the embedded database (one owner process) one
 * worker, killed and started again. Every recipient gets its own code, the same one in every copy it was sent,
 * no code goes to two people, and expired codes are never used.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import type { Db } from '../../src/core/db/client.js'
import { queryOne, queryRows } from '../../src/core/db/sql.js'
import { seedSendingList, workerEnvOf } from '../helpers/campaign-seed.js'
import { testDbKind } from '../helpers/databases.js'
import { freshInstallation, startServerProcess, type Installation } from '../helpers/processes.js'
import { startSmtpSink } from '../helpers/smtp-sink.js'

const RECIPIENTS = 1500
const EXPIRED = 300

async function campaignWithCoupons(db: Db, accountId: number): Promise<{ campaign: number; folder: number }> {
  const listId = await seedSendingList(db, accountId, {
    recipients: RECIPIENTS,
    selector: 'coupons',
    listName: 'Coupons',
  })
  const folder = await queryOne<{ id: number }>(
    db,
    sql`INSERT INTO coupon_folders (account_id, name) VALUES (${accountId}, 'Spring') RETURNING id`,
  )
  // The oldest codes expired yesterday; then one valid code per recipient and a few to spare.
  await db.execute(sql`INSERT INTO coupons (folder_id, code, valid_until)
    SELECT ${folder!.id}, 'EXP' || g, current_date - 1 FROM generate_series(1, ${EXPIRED}) g ORDER BY g`)
  await db.execute(sql`INSERT INTO coupons (folder_id, code)
    SELECT ${folder!.id}, 'OK' || g FROM generate_series(1, ${RECIPIENTS + 50}) g ORDER BY g`)
  const campaign = await queryOne<{ id: number }>(
    db,
    sql`INSERT INTO campaigns (account_id, title, subject, from_name, from_email, reply_to, html_text, targets,
                               status, sent_at)
        VALUES (${accountId}, 'Coupons', ${`Code [*|COUPON:${folder!.id}|*]`}, 'Shop', 'news@shop.example', '',
                ${`<p>Hello *|name|*, your code is *|COUPON:${folder!.id}|*</p>`},
                ${JSON.stringify({ lists: [listId], segments: [] })}::jsonb, 1, now())
        RETURNING id`,
  )
  return { campaign: campaign!.id, folder: folder!.id }
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}

const sink = await startSmtpSink()
const workerEnv = (inst: Installation) => workerEnvOf(inst, sink.url)

describe('coupon codes drawn by worker processes', () => {
  it('every recipient gets its own unexpired code, the same in every copy, with workers killed and restarted', async () => {
    sink.messages.length = 0
    const inst = await freshInstallation()
    const first = await startServerProcess({ ...inst.env, ROLE: 'all' })
    await first.stop()
    const { campaign, folder } = await inst.withDb(async (db, accounts) => {
      const { account_id } = await accounts.createAccount('Coupons', 'marketer')
      return campaignWithCoupons(db, account_id)
    })
    const postgres = testDbKind() === 'postgres'
    // PostgreSQL: a steady second worker beside the one that is killed; embedded: one owner process.
    const steady = postgres ? await startServerProcess({ ...workerEnv(inst), ROLE: 'worker' }) : undefined
    const role = postgres ? 'worker' : 'all'
    const killed = await startServerProcess({ ...workerEnv(inst), ROLE: role })
    await waitUntil(() => sink.messages.length >= 200 + Math.floor(Math.random() * 300), 60_000)
    await killed.kill()
    const restarted = await startServerProcess({ ...workerEnv(inst), ROLE: role })
    const recipients = () => new Set(sink.messages.map((m) => m.envelopeTo[0])).size
    await waitUntil(() => recipients() >= RECIPIENTS, 120_000)
    // Rows of the killed worker's batch are sent again after its lease; let them arrive.
    await new Promise((r) => setTimeout(r, 3000))
    await restarted.stop()
    await steady?.stop()

    const codeByRecipient = new Map<string, string>()
    for (const m of sink.messages) {
      const to = m.envelopeTo[0]!
      const code = /\[(.*)\]$/.exec(m.parsed.subject ?? '')![1]!
      assert.ok(code.startsWith('OK'), `${to} got ${JSON.stringify(code)}`)
      assert.ok(String(m.parsed.html).includes(`your code is ${code}`))
      const before = codeByRecipient.get(to)
      assert.ok(before === undefined || before === code, `${to} got ${before} and then ${code}`)
      codeByRecipient.set(to, code)
    }
    assert.equal(codeByRecipient.size, RECIPIENTS)
    assert.equal(new Set(codeByRecipient.values()).size, RECIPIENTS, 'no code went to two people')
    const state = await inst.withDb(async (db) => ({
      campaign: await queryOne<{ status: number }>(
        db,
        sql`SELECT status FROM campaigns WHERE id = ${campaign}`,
      ),
      assigned: await queryRows<{ expired: boolean; n: number }>(
        db,
        sql`SELECT code LIKE 'EXP%' AS expired, count(DISTINCT message_id)::int AS n FROM coupons
            WHERE folder_id = ${folder} AND message_id IS NOT NULL GROUP BY 1`,
      ),
    }))
    assert.equal(state.campaign?.status, 3)
    assert.deepEqual(state.assigned, [{ expired: false, n: RECIPIENTS }])
  })
})
