/**
 * Crash safety of campaign sending, with real processes: a worker killed (SIGKILL) at random points of a
 * 2,000-recipient send, restarted each time, misses nobody and sends at most the batch in flight twice;
 * two workers sending one campaign on PostgreSQL both send part of it and never send a recipient twice.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import type { Db } from '../../src/core/db/client.js'
import { queryOne } from '../../src/core/db/sql.js'
import { SEND_BATCH } from '../../src/modules/delivery/index.js'
import { seedSendingList, workerEnvOf } from '../helpers/campaign-seed.js'
import { testDbKind } from '../helpers/databases.js'
import { freshInstallation, startServerProcess, type Installation } from '../helpers/processes.js'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js'

const RECIPIENTS = 2000

/** An account with a verified sending domain, a list of RECIPIENTS subscribers and a campaign being sent. */
async function campaignBeingSent(db: Db, accountId: number): Promise<number> {
  const listId = await seedSendingList(db, accountId, {
    recipients: RECIPIENTS,
    selector: 'crash',
    listName: 'Crash',
  })
  const campaign = await queryOne<{ id: number }>(
    db,
    sql`INSERT INTO campaigns (account_id, title, subject, from_name, from_email, reply_to, html_text, targets,
                               status, sent_at)
        VALUES (${accountId}, 'Crash', 'Hi *|name|*', 'Shop', 'news@shop.example', '',
                '<p>Hello *|name|*, <a href="https://shop.example/">shop</a></p>',
                ${JSON.stringify({ lists: [listId], segments: [] })}::jsonb, 1, now())
        RETURNING id`,
  )
  return campaign!.id
}

async function setUp(inst: Installation): Promise<number> {
  // A first start migrates the installation (the embedded one cannot be opened by two processes at once).
  const first = await startServerProcess({ ...inst.env, ROLE: 'all' })
  await first.stop()
  return inst.withDb(async (db, accounts) => {
    const { account_id } = await accounts.createAccount('Crash', 'marketer')
    return campaignBeingSent(db, account_id)
  })
}

function counts(sink: SmtpSink): Map<string, number> {
  const seen = new Map<string, number>()
  for (const m of sink.messages) for (const to of m.envelopeTo) seen.set(to, (seen.get(to) ?? 0) + 1)
  return seen
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}

async function campaignState(inst: Installation, id: number) {
  return inst.withDb(async (db) =>
    queryOne<{ status: number; left: number; sent: number }>(
      db,
      sql`SELECT c.status,
                 (SELECT count(*)::int FROM messages WHERE campaign_id = c.id AND status <> 1) AS left,
                 (SELECT count(*)::int FROM messages WHERE campaign_id = c.id AND status = 1) AS sent
          FROM campaigns c WHERE c.id = ${id}`,
    ),
  )
}

const sink = await startSmtpSink()
const workerEnv = (inst: Installation) => workerEnvOf(inst, sink.url)

describe('campaign sending survives SIGKILL', () => {
  it('a worker killed at random points and restarted misses nobody; duplicates stay within the batch in flight', async () => {
    sink.messages.length = 0
    const inst = await freshInstallation()
    const id = await setUp(inst)
    const kills = 4
    for (let k = 0; k < kills; k++) {
      const server = await startServerProcess({ ...workerEnv(inst), ROLE: 'all' })
      // Kill after a random number of further deliveries (or 20 s at most): mid-batch, between batches.
      const target = sink.messages.length + 1 + Math.floor(Math.random() * 400)
      await waitUntil(() => sink.messages.length >= target, 20_000)
      await server.kill()
    }
    const last = await startServerProcess({ ...workerEnv(inst), ROLE: 'all' })
    await waitUntil(() => counts(sink).size >= RECIPIENTS, 120_000)
    // The rows of the last killed batch are sent again after the lease; give the ledger time to settle.
    await new Promise((r) => setTimeout(r, 1500))
    await last.stop()
    const seen = counts(sink)
    assert.equal(seen.size, RECIPIENTS, 'every recipient got the campaign')
    const duplicates = [...seen.values()].reduce((a, n) => a + n - 1, 0)
    assert.ok(duplicates <= kills * SEND_BATCH, `${duplicates} duplicates after ${kills} kills`)
    // A copy sent again is the same message: one Message-ID per recipient, so the receiver can drop it. (A run
    // whose kills all fell between batches has no copies and checks nothing here; compose-message.test.ts always
    // checks that composing a row again gives its Message-ID again.)
    const ids = new Map<string, Set<string>>()
    for (const m of sink.messages)
      for (const to of m.envelopeTo) ids.set(to, (ids.get(to) ?? new Set()).add(m.parsed.messageId ?? ''))
    assert.deepEqual(
      [...ids].filter(([, set]) => set.size !== 1),
      [],
      'one Message-ID for every copy of a message',
    )
    const state = await campaignState(inst, id)
    assert.deepEqual(state, { status: 3, left: 0, sent: RECIPIENTS })
  })

  it('two workers on one PostgreSQL share the campaign and never send a recipient twice', async (t) => {
    if (testDbKind() !== 'postgres') {
      t.skip('PostgreSQL only: the embedded database has a single owner process')
      return
    }
    // Each worker greets the relay under its own EHLO name, so the sink knows which process delivered what;
    // the sink holds all mail until both have connected, so neither can finish the campaign alone first.
    const shared = await startSmtpSink({ holdUntilClients: 2 })
    const inst = await freshInstallation()
    const id = await setUp(inst)
    const names = ['worker-a.tidings.test', 'worker-b.tidings.test']
    const workers = await Promise.all(
      names.map((name) =>
        startServerProcess({
          ...workerEnv(inst),
          SMTP_URL: `${shared.url}?ehlo=${name}`,
          // Nobody dies here: a long lease keeps a batch held at the sink from being taken over as abandoned.
          SEND_LEASE_SECONDS: '30',
          ROLE: 'worker',
        }),
      ),
    )
    await waitUntil(() => counts(shared).size >= RECIPIENTS, 120_000)
    // A recipient sent twice would arrive after the last new one.
    await new Promise((r) => setTimeout(r, 1000))
    await Promise.all(workers.map((w) => w.stop()))
    const seen = counts(shared)
    assert.equal(seen.size, RECIPIENTS)
    assert.equal(shared.messages.length, RECIPIENTS, 'no recipient twice')
    const byWorker = new Map<string, number>()
    for (const m of shared.messages) byWorker.set(m.clientName, (byWorker.get(m.clientName) ?? 0) + 1)
    assert.deepEqual([...byWorker.keys()].sort(), names, 'every message came from one of the two workers')
    for (const name of names) assert.ok(byWorker.get(name)! > 0, `${name} sent part of the campaign`)
    assert.deepEqual(await campaignState(inst, id), { status: 3, left: 0, sent: RECIPIENTS })
  })
})
