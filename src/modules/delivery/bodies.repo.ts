import { eq, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { messageBatches, type BatchAttachment, type BodyKind } from './bodies.table.js'

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
  globalVars: Record<string, string>
  copies: Record<string, { cc: string[]; bcc: string[] }>
  attachments: BatchAttachment[]
  trackOpens: boolean
  trackClicks: boolean
  marketing: boolean
}

export interface NewBodyRecipient {
  email: string
  name: string
  contactId: number | null
  vars: Record<string, string> | null
  pipelineId: number | null
  actionId: string | null
}

/**
 * Side effect, one statement: the body row and one queued ledger row per recipient (message ids in the order
 * of `recipients`). One JSON parameter carries the recipients, so the statement has one shape whatever their
 * number and no bind-parameter limit.
 */
export async function insertBodyWithMessages(
  ex: Executor,
  b: NewBody,
  recipients: NewBodyRecipient[],
  now: Date,
): Promise<{ bodyId: number; messageIds: number[] }> {
  const at = now.toISOString()
  const row = await queryOne<{ body_id: number; ids: (string | number)[] | null }>(
    ex,
    sql`WITH b AS (
          INSERT INTO message_batches (account_id, kind, template_id, from_name, from_email, reply_to, subject,
                                       html, text, global_vars, copies, attachments, track_opens, track_clicks,
                                       marketing, created_at)
          VALUES (${b.accountId}, ${b.kind}, ${b.templateId}, ${b.fromName}, ${b.fromEmail}, ${b.replyTo},
                  ${b.subject}, ${b.html}, ${b.text}, ${JSON.stringify(b.globalVars)}::jsonb,
                  ${JSON.stringify(b.copies)}::jsonb, ${JSON.stringify(b.attachments)}::jsonb, ${b.trackOpens},
                  ${b.trackClicks}, ${b.marketing}, ${at}::timestamptz)
          RETURNING id),
        m AS (
          INSERT INTO messages (account_id, kind, batch_id, pipeline_id, action_id, contact_id, email,
                                recipient_name, vars, subject, status, track_opens, track_clicks, created_at)
          SELECT ${b.accountId}, ${b.kind}, b.id, (r.j->>'pipelineId')::int, r.j->>'actionId',
                 (r.j->>'contactId')::int, r.j->>'email', coalesce(r.j->>'name', ''),
                 nullif(r.j->'vars', 'null'::jsonb), ${b.subject.slice(0, 998)}, 0, ${b.trackOpens},
                 ${b.trackClicks}, ${at}::timestamptz
          FROM b, jsonb_array_elements(${JSON.stringify(recipients)}::jsonb) WITH ORDINALITY AS r(j, n)
          ORDER BY r.n
          RETURNING id)
        SELECT (SELECT id FROM b) AS body_id, (SELECT jsonb_agg(id ORDER BY id) FROM m) AS ids`,
  )
  return { bodyId: Number(row!.body_id), messageIds: (row!.ids ?? []).map(Number) }
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

/** What the web version and the click page need to render a body message again. */
export async function findBodyMessage(ex: Executor, messageId: number) {
  return queryOne<{
    batch_id: number | null
    email: string
    recipient_name: string
    vars: Record<string, string> | null
    track_opens: boolean
    track_clicks: boolean
    html: string | null
    links: string[] | null
  }>(
    ex,
    sql`SELECT batch_id, email, recipient_name, vars, track_opens, track_clicks, html, links
        FROM messages WHERE id = ${messageId}`,
  )
}
