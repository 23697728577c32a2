import { and, asc, eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { templates } from './templates.table.js'
import type { TemplateRow } from './templates.schemas.js'

export type TemplateValues = Partial<Omit<typeof templates.$inferInsert, 'id' | 'accountId'>>

const mine = (accountId: number, id: number) => and(eq(templates.id, id), eq(templates.accountId, accountId))

export async function insertTemplate(
  ex: Executor,
  accountId: number,
  values: TemplateValues & { name: string; html: string },
): Promise<TemplateRow> {
  const [row] = await ex
    .insert(templates)
    .values({ ...values, accountId })
    .returning()
  return row!
}

export async function listTemplates(ex: Executor, accountId: number): Promise<TemplateRow[]> {
  return ex.select().from(templates).where(eq(templates.accountId, accountId)).orderBy(asc(templates.id))
}

export async function findTemplate(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<TemplateRow | undefined> {
  const [row] = await ex.select().from(templates).where(mine(accountId, id))
  return row
}

export async function updateTemplate(
  ex: Executor,
  accountId: number,
  id: number,
  values: TemplateValues,
): Promise<TemplateRow | undefined> {
  const [row] = await ex.update(templates).set(values).where(mine(accountId, id)).returning()
  return row
}

export async function deleteTemplate(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const rows = await ex.delete(templates).where(mine(accountId, id)).returning({ id: templates.id })
  return rows.length > 0
}
