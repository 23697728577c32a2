/**
 * Crash safety of the one sender for transactional mail, with real processes: a worker (ROLE=all, API and
 * sender) killed (SIGKILL) during a burst of transactional calls mixed with a campaign, and restarted, sends
 * every message whose call was answered at least once, and at most the batches in flight twice; the killed
 * worker's claimed batches go out without waiting for their lease (test/e2e/campaign-crash.test.ts keeps the
 * short lease of the other tests).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { queryOne } from '../../src/core/db/sql.js'
import { SEND_BATCH } from '../../src/modules/delivery/index.js'
import { seedSendingList, workerEnvOf } from '../helpers/campaign-seed.js'
import { freshInstallation, startServerProcess, type ServerProcess } from '../helpers/processes.js'
import { startSmtpSink } from '../helpers/smtp-sink.js'

/** Enough for each kill to land mid-burst and with a campaign batch in hand; small enough to keep CI lean. */
const CAMPAIGN = 400
const CALLS = 120

const sink = await startSmtpSink()

function counts(): Map<string, number> {
  const seen = new Map<string, number>()
  for (const m of sink.messages) for (const to of m.envelopeTo) seen.set(to, (seen.get(to) ?? 0) + 1)
  return seen
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}

describe('transactional mail survives SIGKILL', () => {
  it('a worker killed during a transactional burst (with a campaign) loses no answered call', async () => {
    const inst = await freshInstallation()
    // Migrated in this process: a server start only for that cost as much as the rest of a kill cycle.
    await inst.migrate()
    const apiKey = await inst.withDb(async (db, accounts) => {
      const { account_id, api_key } = await accounts.createAccount('Crash', 'marketer')
      const listId = await seedSendingList(db, account_id, {
        recipients: CAMPAIGN,
        selector: 'crash',
        listName: 'Crash',
      })
      await queryOne(
        db,
        sql`INSERT INTO campaigns (account_id, title, subject, from_name, from_email, reply_to, html_text, targets,
                                   status, sent_at)
            VALUES (${account_id}, 'Crash', 'Hi', 'Shop', 'news@shop.example', '', '<p>Hello</p>',
                    ${JSON.stringify({ lists: [listId], segments: [] })}::jsonb, 1, now())
            RETURNING id`,
      )
      return api_key
    })
    const answered = new Set<string>()
    let next = 0
    /** Sends calls (4 at a time) until all are answered or the server goes away. */
    const burst = async (server: ServerProcess) => {
      const lane = async () => {
        while (next < CALLS) {
          const email = `t${next++}@example.org`
          try {
            const res = await fetch(`${server.url}/transactional/send-message`, {
              method: 'POST',
              headers: { key: apiKey, 'content-type': 'application/json' },
              body: JSON.stringify({
                message: {
                  subject: 'Order *|n|*',
                  from_name: 'Shop',
                  from_email: 'orders@shop.example',
                  html: '<p>Thanks <a href="https://shop.example/o">order</a></p>',
                  to: [{ email }],
                  global_merge_vars: [{ name: 'n', content: email }],
                },
              }),
              signal: AbortSignal.timeout(10_000),
            })
            if (res.status === 200) answered.add(email)
            else next = Math.min(next, CALLS) // a refusal is a bug: the assertion below shows it
          } catch {
            return // the server died under the call: its answer never came, so it may or may not be queued
          }
        }
      }
      await Promise.all([lane(), lane(), lane(), lane()])
    }
    const kills = 3
    // No lease runs out within the test: a killed worker's claimed mail must be freed by its lock going with it
    // (delivery/claimer.ts), on PostgreSQL by the connection closing, on PGlite by the process that owned it.
    const env = { ...workerEnvOf(inst, sink.url), SEND_LEASE_SECONDS: '3600' }
    for (let k = 0; k < kills; k++) {
      const server = await startServerProcess({ ...env, ROLE: 'all' })
      const calls = burst(server)
      // Kill after a random number of further deliveries: mid-burst, mid-batch.
      const target = sink.messages.length + 10 + Math.floor(Math.random() * 80)
      await waitUntil(() => sink.messages.length >= target || next >= CALLS, 20_000)
      await server.kill()
      await calls
    }
    const last = await startServerProcess({ ...env, ROLE: 'all' })
    await burst(last)
    assert.ok(answered.size >= CALLS - kills * 4, `${answered.size} calls answered`)
    const done = () => {
      const seen = counts()
      return [...answered].every((a) => seen.has(a)) && seen.size >= CAMPAIGN + answered.size
    }
    await waitUntil(done, 120_000)
    await new Promise((r) => setTimeout(r, 1500))
    await last.stop()
    const seen = counts()
    const missing = [...answered].filter((a) => !seen.has(a))
    assert.deepEqual(missing, [], 'every answered call reached the relay')
    const campaignSeen = [...seen.keys()].filter((a) => /^r\d+@example\.cz$/.test(a)).length
    assert.equal(campaignSeen, CAMPAIGN, 'every campaign recipient got it')
    const duplicates = [...seen.values()].reduce((a, n) => a + n - 1, 0)
    assert.ok(duplicates <= kills * 2 * SEND_BATCH, `${duplicates} duplicates after ${kills} kills`)
    const left = await inst.withDb((db) =>
      queryOne<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM messages WHERE status IN (0, 4)`),
    )
    assert.equal(left?.n, 0, 'nothing left queued or claimed')
  })
})
