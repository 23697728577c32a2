import type { AppContext } from '../../core/context.js'
import { fieldError, notFound } from '../../core/http/errors.js'
import * as repo from './templates.repo.js'
import { toTemplateObject, type TemplateInput, type TemplateRow } from './templates.schemas.js'

/** The name as stored: trimmed, and never blank (a name of spaces passes the schema's minLength). */
function templateName(raw: string): string {
  const name = raw.trim()
  if (!name) throw fieldError('name', 'The name field is required.')
  return name
}

function toValues(input: TemplateInput): repo.TemplateValues {
  const v: repo.TemplateValues = {}
  if (input.name !== undefined) v.name = templateName(input.name)
  if (input.html !== undefined) v.html = input.html
  if (input.subject !== undefined) v.subject = input.subject
  if (input.folder !== undefined) v.folder = input.folder
  if (input.campaign_id !== undefined) v.campaignId = input.campaign_id
  return v
}

/** The account's template, or the contract's 404 (another account's template looks missing). */
export async function requireTemplate(
  ctx: Pick<AppContext, 'db'>,
  accountId: number,
  id: number,
): Promise<TemplateRow> {
  const row = await repo.findTemplate(ctx.db, accountId, id)
  if (!row) throw notFound('Template not found')
  return row
}

export function createTemplateService(ctx: Pick<AppContext, 'db' | 'clock'>) {
  return {
    async create(accountId: number, input: TemplateInput & { name: string; html: string }) {
      const now = ctx.clock.now()
      const row = await repo.insertTemplate(ctx.db, accountId, {
        ...toValues(input),
        name: templateName(input.name),
        html: input.html,
        createdAt: now,
        updatedAt: now,
      })
      return toTemplateObject(row)
    },
    async all(accountId: number) {
      return (await repo.listTemplates(ctx.db, accountId)).map(toTemplateObject)
    },
    async one(accountId: number, id: number) {
      return toTemplateObject(await requireTemplate(ctx, accountId, id))
    },
    async update(accountId: number, id: number, input: TemplateInput) {
      const row = await repo.updateTemplate(ctx.db, accountId, id, {
        ...toValues(input),
        updatedAt: ctx.clock.now(),
      })
      if (!row) throw notFound('Template not found')
      return toTemplateObject(row)
    },
    async remove(accountId: number, id: number) {
      if (!(await repo.deleteTemplate(ctx.db, accountId, id))) throw notFound('Template not found')
      return { deleted: true }
    },
  }
}
