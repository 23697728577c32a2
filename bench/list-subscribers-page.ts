/**
 * `GET /lists/{id}/subscribers?per_page=5000` on PostgreSQL (design.md: ≤ 150 ms now, goal 50 ms).
 * Seeds a throwaway database with one list of MEMBERS subscribed people (plus 20 % unsubscribed ones), then times
 * the route through app.inject (handler, SQL and serialisation; no socket). Not a test: it prints figures.
 *
 *   node --import tsx bench/list-subscribers-page.ts   [BENCH_DATABASE_URL=postgres://…/postgres] [MEMBERS=100000]
 */
import pg from 'pg'
import { sql } from 'drizzle-orm'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/core/config.js'
import { createContext } from '../src/core/context.js'
import { createAccountService } from '../src/modules/index.js'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const members = Number(process.env.MEMBERS ?? 100_000)
const runs = Number(process.env.RUNS ?? 30)
const dbName = `tidings_bench_${process.pid}`

async function admin(query: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl })
  await c.connect()
  try {
    await c.query(query)
  } finally {
    await c.end()
  }
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1)
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${s[0]!.toFixed(1)} ms`
}

async function main(): Promise<void> {
  await admin(`CREATE DATABASE ${dbName}`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  const config = { ...loadConfig({}), databaseUrl: url.toString(), logLevel: 'silent', rateLimitPerMinute: 0 }
  const ctx = await createContext(config)
  try {
    const account = await createAccountService(ctx).createAccount('Bench', 'marketer')
    const accountId = account.account_id
    const list = await ctx.db.execute(sql`INSERT INTO lists (account_id, name) VALUES (${accountId}, 'Bench')
                                          RETURNING id`)
    const listId = Number((list as unknown as { rows: { id: number }[] }).rows[0]!.id)
    const total = Math.round(members * 1.2)
    const t0 = performance.now()
    await ctx.db.execute(sql`
      INSERT INTO contacts (account_id, email, name, surname, gender, company, city, country, phone,
                            custom_fields, tags, groups)
      SELECT ${accountId}, 'person' || i || '@example.cz', 'Name' || i, 'Surname' || i, 'female',
             CASE WHEN i % 3 = 0 THEN NULL ELSE 'Company ' || i END, 'Praha', 'CZ', '+420 777 ' || i,
             jsonb_build_object('order_count', i % 17, 'vip', i % 5 = 0, 'last_order', '2026-01-02'),
             ARRAY['newsletter', 'tag' || (i % 10)], jsonb_build_object('interests', jsonb_build_array('a', 'b'))
      FROM generate_series(1, ${total}) AS i`)
    await ctx.db.execute(sql`
      INSERT INTO memberships (account_id, list_id, contact_id, status, source, subscribed_at)
      SELECT ${accountId}, ${listId}, id, CASE WHEN id % 6 = 0 THEN 2 ELSE 1 END, 'import',
             now() - (id || ' minutes')::interval
      FROM contacts WHERE account_id = ${accountId}`)
    await ctx.db.execute(sql`VACUUM ANALYZE contacts`)
    await ctx.db.execute(sql`VACUUM ANALYZE memberships`)
    process.stdout.write(`seeded ${total} contacts in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)

    const app = await buildApp(ctx)
    const time = async (path: string) => {
      const ms: number[] = []
      let bytes = 0
      for (let i = 0; i < runs + 5; i++) {
        const start = performance.now()
        const res = await app.inject({ method: 'GET', url: path, headers: { key: account.api_key } })
        const took = performance.now() - start
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body.slice(0, 200)}`)
        bytes = res.rawPayload.length
        if (i >= 5) ms.push(took)
      }
      process.stdout.write(`${path}: ${stats(ms)} (${(bytes / 1e6).toFixed(2)} MB)\n`)
    }
    await time(`/lists/${listId}/subscribers?per_page=5000`)
    await time(`/lists/${listId}/subscribers?per_page=5000&page=20`)
    await time(`/lists/${listId}/subscribers?per_page=20&page=4000`)
    await app.close()
  } finally {
    await ctx.close()
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
