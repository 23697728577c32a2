import type { AppContext } from '../../core/context.js'
import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import { parseSqlDateTime } from '../../core/http/formats.js'
import { FieldErrorBag, HttpError } from '../../core/http/errors.js'
import { ownListIds } from '../lists/index.js'
import { findSegments } from '../segments/index.js'
import { requireTemplate } from '../templates/index.js'
import * as repo from './campaigns.repo.js'
import type { CampaignBodyT, RecipientListsInputT } from './campaigns.schemas.js'
import type { CampaignTargets } from './campaigns.table.js'

type Ctx = Pick<AppContext, 'db'>

/** Both shapes of `recepient_lists` as the stored targets, each list and segment once, in the order given. */
export function toTargets(input: RecipientListsInputT): CampaignTargets {
  const listIds = Array.isArray(input) ? input : (input.lists ?? [])
  const segs = Array.isArray(input) ? [] : (input.segments ?? [])
  const seen = new Set<string>()
  return {
    lists: [...new Set(listIds)],
    segments: segs.filter((s) => !seen.has(s.id) && seen.add(s.id)).map((s) => ({ id: s.id, list: s.list })),
  }
}

/** Every list must be the account's, and every segment the account's and of the list it is paired with. */
async function checkTargets(ctx: Ctx, accountId: number, targets: CampaignTargets, bag: FieldErrorBag) {
  const field = 'recepient_lists'
  if (targets.lists.length === 0 && targets.segments.length === 0) {
    bag.add(field, 'The recepient_lists field is required.')
    return
  }
  const listIds = [...new Set([...targets.lists, ...targets.segments.map((s) => s.list)])]
  const [known, found] = await Promise.all([
    ownListIds(ctx.db, accountId, listIds),
    findSegments(
      ctx.db,
      accountId,
      targets.segments.map((s) => s.id),
    ),
  ])
  const segmentList = new Map(found.map((s) => [s.id, s.listId]))
  for (const id of listIds) if (!known.has(id)) bag.add(field, `The list ${id} does not exist.`)
  for (const s of targets.segments) {
    const list = segmentList.get(s.id)
    if (list === undefined) bag.add(field, `The segment ${s.id} does not exist.`)
    else if (list !== s.list) bag.add(field, `The segment ${s.id} does not belong to list ${s.list}.`)
  }
}

async function checkTemplate(ctx: Ctx, accountId: number, id: number, bag: FieldErrorBag) {
  try {
    await requireTemplate(ctx, accountId, id)
  } catch (err) {
    // Another account's template answers 404 there; here it is a bad field of the body.
    if (err instanceof HttpError && err.statusCode === 404)
      bag.add('template_id', 'The selected template_id is invalid.')
    else throw err
  }
}

/** An address, or '' for "the list's" (sender fields, see senderIdentity). */
function address(value: string, field: string, bag: FieldErrorBag): string {
  const email = normalizeEmail(value)
  if (email !== '' && !isValidEmail(email)) bag.add(field, `The ${field} must be a valid email address.`)
  return email
}

function text(value: string, field: string, bag: FieldErrorBag): string {
  const trimmed = value.trim()
  if (trimmed === '') bag.add(field, `The ${field} field is required.`)
  return trimmed
}

/**
 * The body of POST and PUT as column values, after every check that needs no campaign: each bad field is
 * reported at once (422). Optional fields left out are left out of the values, so a PUT keeps them.
 */
export async function campaignValues(
  ctx: Ctx,
  accountId: number,
  body: CampaignBodyT,
): Promise<Omit<repo.CampaignValues, 'status'>> {
  const bag = new FieldErrorBag()
  const targets = toTargets(body.recepient_lists)
  const values: Omit<repo.CampaignValues, 'status'> = {
    title: text(body.title, 'title', bag),
    fromName: body.from_name.trim(),
    fromEmail: address(body.from_email, 'from_email', bag),
    replyTo: address(body.reply_to, 'reply_to', bag),
    subject: text(body.subject, 'subject', bag),
    htmlText: body.html_text,
    targets,
  }
  if (body.html_text.trim() === '') bag.add('html_text', 'The html_text field is required.')
  if (body.plain_text !== undefined) values.plainText = body.plain_text || null
  if (body.template_id !== undefined) {
    values.templateId = body.template_id || null
    if (values.templateId !== null) await checkTemplate(ctx, accountId, values.templateId, bag)
  }
  if (body.scheduled_at !== undefined) {
    const raw = body.scheduled_at?.trim() ?? ''
    values.scheduledAt = raw === '' ? null : parseSqlDateTime(raw)
    if (values.scheduledAt === null && raw !== '')
      bag.add('scheduled_at', 'The scheduled_at does not match the format Y-m-d H:i:s.')
  }
  await checkTargets(ctx, accountId, targets, bag)
  bag.throwIfAny()
  return values
}
