import { and, eq, gte, ilike, inArray, lt, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { campaigns, type CampaignStatus } from './campaigns.table.js'
import type { CampaignListRow, CampaignRow, CampaignSort } from './campaigns.schemas.js'

export type CampaignValues = Omit<typeof campaigns.$inferInsert, 'id' | 'accountId'>

/** Statuses in which a campaign may still be edited or deleted (contract §4): draft and scheduled. */
export const EDITABLE_STATUSES: readonly CampaignStatus[] = [0, 7]

const mine = (accountId: number, id: number) => and(eq(campaigns.id, id), eq(campaigns.accountId, accountId))
const editable = inArray(campaigns.status, [...EDITABLE_STATUSES])

export async function insertCampaign(
  ex: Executor,
  accountId: number,
  values: CampaignValues,
): Promise<CampaignRow> {
  const [row] = await ex
    .insert(campaigns)
    .values({ ...values, accountId })
    .returning()
  return row!
}

/** The full row of the account's campaign (another account's looks missing). */
export async function findCampaign(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<CampaignRow | undefined> {
  const [row] = await ex.select().from(campaigns).where(mine(accountId, id))
  return row
}

/** By id alone: only for the public archive page, whose signed token stands in for the account. */
export async function findCampaignById(ex: Executor, id: number): Promise<CampaignRow | undefined> {
  const [row] = await ex.select().from(campaigns).where(eq(campaigns.id, id))
  return row
}

/** `GET /campaigns` filters, already parsed; day bounds are half-open UTC instants. */
export interface CampaignFilter {
  title?: string
  subject?: string
  status?: number
  id?: number
  changedFrom?: Date
  changedBefore?: Date
  sentFrom?: Date
  sentBefore?: Date
}

/** A LIKE pattern matching `text` anywhere: its own %, _ and \ match themselves. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`

function filterConditions(accountId: number, f: CampaignFilter): SQL[] {
  const where: SQL[] = [eq(campaigns.accountId, accountId)]
  if (f.title !== undefined) where.push(ilike(campaigns.title, containing(f.title)))
  if (f.subject !== undefined) where.push(ilike(campaigns.subject, containing(f.subject)))
  if (f.status !== undefined) where.push(eq(campaigns.status, f.status as CampaignStatus))
  if (f.id !== undefined) where.push(eq(campaigns.id, f.id))
  if (f.changedFrom) where.push(gte(campaigns.changedAt, f.changedFrom))
  if (f.changedBefore) where.push(lt(campaigns.changedAt, f.changedBefore))
  // A campaign never sent has no sent_at and so matches no date range.
  if (f.sentFrom) where.push(gte(campaigns.sentAt, f.sentFrom))
  if (f.sentBefore) where.push(lt(campaigns.sentAt, f.sentBefore))
  return where
}

const SORT_COLUMNS: Record<CampaignSort, SQL> = {
  id: sql`${campaigns.id}`,
  sent_at: sql`${campaigns.sentAt}`,
  changed_at: sql`${campaigns.changedAt}`,
  // Case-insensitive, so "apple" and "Banana" sort as a person expects on either database.
  title: sql`lower(${campaigns.title})`,
  status: sql`${campaigns.status}`,
}

/**
 * One page of the account's campaigns, only the list-item columns. Campaigns not yet sent come last whichever
 * way sent_at is sorted; the id (same direction) breaks ties so pages never overlap.
 */
export async function listCampaigns(
  ex: Executor,
  accountId: number,
  filter: CampaignFilter,
  sort: { by: CampaignSort; dir: 'asc' | 'desc' },
  limit: number,
  offset: number,
): Promise<CampaignListRow[]> {
  const dir = sql.raw(sort.dir === 'asc' ? 'ASC' : 'DESC')
  const order = [sql`${SORT_COLUMNS[sort.by]} ${dir} NULLS LAST`]
  if (sort.by !== 'id') order.push(sql`${campaigns.id} ${dir}`)
  return ex
    .select({
      id: campaigns.id,
      fromName: campaigns.fromName,
      fromEmail: campaigns.fromEmail,
      replyTo: campaigns.replyTo,
      title: campaigns.title,
      subject: campaigns.subject,
      sentAt: campaigns.sentAt,
      recipients: campaigns.recipients,
      status: campaigns.status,
      scheduledAt: campaigns.scheduledAt,
      templateId: campaigns.templateId,
      error: campaigns.error,
      errorCode: campaigns.errorCode,
    })
    .from(campaigns)
    .where(and(...filterConditions(accountId, filter)))
    .orderBy(...order)
    .limit(limit)
    .offset(offset)
}

/**
 * Updates the campaign only while its status is one of `statuses` (draft or scheduled), in one statement, so
 * a send starting at the same moment cannot have its content changed under it. Undefined when it is missing
 * or in another status.
 */
export async function updateEditableCampaign(
  ex: Executor,
  accountId: number,
  id: number,
  statuses: readonly CampaignStatus[],
  values: Partial<CampaignValues>,
): Promise<CampaignRow | undefined> {
  const [row] = await ex
    .update(campaigns)
    .set(values)
    .where(and(mine(accountId, id), inArray(campaigns.status, [...statuses])))
    .returning()
  return row
}

/** Deletes the campaign only while it is a draft or scheduled (nothing was sent, so nothing refers to it). */
export async function deleteEditableCampaign(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const rows = await ex
    .delete(campaigns)
    .where(and(mine(accountId, id), editable))
    .returning({ id: campaigns.id })
  return rows.length > 0
}
