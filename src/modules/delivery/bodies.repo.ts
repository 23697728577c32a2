import { eq, inArray, sql } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import type { MergeValue } from '../../core/mail/merge-tags.js'
import { queryOne, queryRows, queryRowsOn } from '../../core/db/sql.js'
import { messageBatches, type BatchAttachment, type BatchCopies, type BodyKind } from './bodies.table.js'

export type BodyRow = typeof messageBatches.$inferSelect

export interface NewBody {
  accountId: number
  kind: BodyKind
  templateId: number | null
  fromName: string
  fromEmail: string
  replyTo: string | null
  subject: string
  html: string | null
  text: string | null
  ampHtml: string | null
  globalVars: Record<string, string>
  copies: Record<string, BatchCopies>
  attachments: BatchAttachment[]
  trackOpens: boolean
  trackClicks: boolean
  marketing: boolean
}

export interface NewBodyRecipient {
  email: string
  name: string
  contactId: number | null
  vars: Record<string, MergeValue> | null
  pipelineId: number | null
  actionId: string | null
}

/** One body and its recipients, as insertBodiesWithMessages takes them. */
export interface NewBodyWithRecipients {
  body: NewBody
  recipients: NewBodyRecipient[]
}

/**
 * Side effect, one statement: each body row and one queued ledger row per recipient of it (answers, per body in
 * the order given, its id and its message ids in the order of its recipients). One JSON parameter carries
 * everything, so the statement has one shape whatever the number of bodies and recipients, and no
 * bind-parameter limit. Body ids are drawn first so each ledger row knows its body without a join back.
 * Prepared when given the handle rather than a transaction (the transactional intake): parsing and planning
 * the intake's statements, this one and the suppression lookup, were about a third of PostgreSQL's time in the
 * transactional bench, and are a fifteenth since (profiled, issue 11).
 */
export async function insertBodiesWithMessages(
  on: DbHandle | Executor,
  items: NewBodyWithRecipients[],
  now: Date,
): Promise<{ bodyId: number; messageIds: number[] }[]> {
  if (items.length === 0) return []
  const at = now.toISOString()
  const input = items.map(({ body: b, recipients }) => ({ ...b, recipients }))
  const rows = await queryRowsOn<{ body_id: number | string; ids: (string | number)[] | null }>(
    on,
    sql`WITH input AS (
          SELECT nextval(pg_get_serial_sequence('message_batches', 'id')) AS id, t.j, t.n
          FROM jsonb_array_elements(${JSON.stringify(input)}::jsonb) WITH ORDINALITY AS t(j, n)),
        b AS (
          INSERT INTO message_batches (id, account_id, kind, template_id, from_name, from_email, reply_to, subject,
                                       html, text, amp_html, global_vars, copies, attachments, track_opens,
                                       track_clicks, marketing, created_at)
          SELECT id, (j->>'accountId')::int, j->>'kind', (j->>'templateId')::int, j->>'fromName', j->>'fromEmail',
                 j->>'replyTo', j->>'subject', j->>'html', j->>'text', j->>'ampHtml', j->'globalVars', j->'copies',
                 j->'attachments', (j->>'trackOpens')::boolean, (j->>'trackClicks')::boolean,
                 (j->>'marketing')::boolean, ${at}::timestamptz
          FROM input ORDER BY n
          RETURNING id),
        m AS (
          INSERT INTO messages (account_id, kind, batch_id, pipeline_id, action_id, contact_id, email,
                                recipient_name, vars, subject, status, track_opens, track_clicks, created_at)
          SELECT (i.j->>'accountId')::int, i.j->>'kind', i.id, (r.j->>'pipelineId')::int, r.j->>'actionId',
                 (r.j->>'contactId')::int, r.j->>'email', coalesce(r.j->>'name', ''),
                 nullif(r.j->'vars', 'null'::jsonb), left(i.j->>'subject', 998), 0, (i.j->>'trackOpens')::boolean,
                 (i.j->>'trackClicks')::boolean, ${at}::timestamptz
          FROM input i, jsonb_array_elements(i.j->'recipients') WITH ORDINALITY AS r(j, rn)
          ORDER BY i.n, r.rn
          RETURNING id, batch_id)
        SELECT i.id AS body_id, (SELECT jsonb_agg(m.id ORDER BY m.id) FROM m WHERE m.batch_id = i.id) AS ids
        FROM input i ORDER BY i.n`,
  )
  return rows.map((r) => ({ bodyId: Number(r.body_id), messageIds: (r.ids ?? []).map(Number) }))
}

export async function findBody(ex: Executor, id: number): Promise<BodyRow | undefined> {
  const [row] = await ex.select().from(messageBatches).where(eq(messageBatches.id, id))
  return row
}

/** The body rows of these ids, by id (one statement for a claimed batch). */
export async function findBodies(ex: Executor, ids: number[]): Promise<Map<number, BodyRow>> {
  if (ids.length === 0) return new Map()
  const rows = await ex.select().from(messageBatches).where(inArray(messageBatches.id, ids))
  return new Map(rows.map((r) => [r.id, r]))
}

/**
 * The cc and bcc addresses that went with `email`'s message of a body (one SMTP transaction, one VERP
 * address), lower-cased as stored. Reads only that column: a body row may hold megabytes of attachments.
 */
export async function copiesOfRecipient(ex: Executor, batchId: number, email: string): Promise<string[]> {
  const [row] = await ex
    .select({ copies: messageBatches.copies })
    .from(messageBatches)
    .where(eq(messageBatches.id, batchId))
  const copies = row?.copies[email.toLowerCase()]
  return copies ? [...copies.cc, ...copies.bcc] : []
}

/**
 * A GDPR erasure's part of the bodies: `email` as a `to` address, a cc or bcc copy of the account's bodies becomes
 * `pseudonym`, and a copy's display name goes. Only rows whose copies hold the address as a JSON string are read
 * (addresses are stored normalised, as `email` is).
 */
export async function pseudonymiseCopies(ex: Executor, accountId: number, email: string, pseudonym: string) {
  const rows = await queryRows<{ id: number; copies: Record<string, BatchCopies> }>(
    ex,
    sql`SELECT id, copies FROM message_batches
        WHERE account_id = ${accountId} AND copies <> '{}'::jsonb AND strpos(copies::text, ${JSON.stringify(email)}) > 0`,
  )
  const swap = (address: string) => (address === email ? pseudonym : address)
  for (const row of rows) {
    const copies: Record<string, BatchCopies> = {}
    for (const [to, c] of Object.entries(row.copies)) {
      const names = Object.entries(c.names ?? {}).filter(([address]) => address !== email)
      copies[swap(to)] = {
        cc: c.cc.map(swap),
        bcc: c.bcc.map(swap),
        ...(names.length > 0 ? { names: Object.fromEntries(names) } : {}),
      }
    }
    await ex.update(messageBatches).set({ copies }).where(eq(messageBatches.id, row.id))
  }
}

/** What the web version and the click page need to render a body message again. */
export async function findBodyMessage(ex: Executor, messageId: number) {
  return queryOne<{
    batch_id: number | null
    account_id: number
    email: string
    recipient_name: string
    vars: Record<string, string> | null
    track_opens: boolean
    track_clicks: boolean
    html: string | null
    links: string[] | null
  }>(
    ex,
    sql`SELECT batch_id, account_id, email, recipient_name, vars, track_opens, track_clicks, html, links
        FROM messages WHERE id = ${messageId}`,
  )
}
