import type { AppContext } from '../../core/context.js'
import { toPage } from '../../core/db/pagination.js'
import { fieldError, FieldErrorBag } from '../../core/http/errors.js'
import { trackingLinks } from '../tracking/index.js'
import { readCampaignDetailStats } from './campaign-stats.service.js'
import { dayAfter, parseDay } from '../../core/http/formats.js'
import { campaignValues } from './campaigns.input.js'
import * as repo from './campaigns.repo.js'
import { requireCampaign } from './require-campaign.js'
import {
  DEFAULT_CAMPAIGN_PAGE,
  toCampaignDetail,
  toCampaignListItem,
  toCampaignSaved,
  type CampaignBodyT,
  type CampaignListQueryT,
  type CampaignRow,
} from './campaigns.schemas.js'
import type { CampaignStatus } from './campaigns.table.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'linkSecret'>

const NOT_EDITABLE = 'The campaign can be changed only while it is a draft (0) or scheduled (7).'
const KEEPS_SCHEDULE =
  'A scheduled campaign keeps its scheduled_at; DELETE /campaigns/{id}/schedule unschedules it.'

const isEditable = (row: CampaignRow) => repo.EDITABLE_STATUSES.includes(row.status)

/** The query's filters as a repo filter; '' means "not given". Bad calendar days are 422 on their parameter. */
function listFilter(query: CampaignListQueryT): repo.CampaignFilter {
  const bag = new FieldErrorBag()
  const day = (key: 'filters[updated_at]' | 'filters[date_from]' | 'filters[date_to]') => {
    const raw = query[key]
    if (raw === undefined || raw === '') return undefined
    const date = parseDay(raw)
    if (!date) bag.add(key, `The ${key} is not a valid date.`)
    return date ?? undefined
  }
  const text = (raw: string | undefined) => (raw === undefined || raw.trim() === '' ? undefined : raw.trim())
  const int = (raw: number | '' | undefined) => (raw === undefined || raw === '' ? undefined : raw)
  const updated = day('filters[updated_at]')
  const from = day('filters[date_from]')
  const to = day('filters[date_to]')
  if (from && to && to < from)
    bag.add('filters[date_to]', 'The filters[date_to] must be a date after or equal to filters[date_from].')
  bag.throwIfAny()
  const filter: repo.CampaignFilter = {}
  const title = text(query['filters[title]'])
  const subject = text(query['filters[subject]'])
  const status = int(query['filters[status]'])
  const id = int(query['filters[id]'])
  if (title !== undefined) filter.title = title
  if (subject !== undefined) filter.subject = subject
  if (status !== undefined) filter.status = status
  if (id !== undefined) filter.id = id
  if (updated) {
    filter.changedFrom = updated
    filter.changedBefore = dayAfter(updated)
  }
  // Both ends inclusive: date_to covers its whole day.
  if (from) filter.sentFrom = from
  if (to) filter.sentBefore = dayAfter(to)
  return filter
}

export function createCampaignService(ctx: Ctx) {
  const archiveUrl = trackingLinks(ctx).archive

  /** Why a conditional write found nothing: the campaign is gone (404) or no longer editable (422). */
  async function explainMiss(accountId: number, id: number, clearsSchedule = false): Promise<never> {
    const row = await requireCampaign(ctx, accountId, id)
    if (!isEditable(row)) throw fieldError('status', NOT_EDITABLE)
    if (clearsSchedule && row.status === 7) throw fieldError('scheduled_at', KEEPS_SCHEDULE)
    // Its status moved between the two statements and back: report it as the conflict it was.
    throw fieldError('status', NOT_EDITABLE)
  }

  return {
    async list(accountId: number, query: CampaignListQueryT) {
      const filter = listFilter(query)
      const page = toPage(query.page, query.per_page, DEFAULT_CAMPAIGN_PAGE)
      const sort = { by: query.sort_by ?? 'id', dir: query.sort_dir ?? 'desc' } as const
      const rows = await repo.listCampaigns(ctx.db, accountId, filter, sort, page.perPage, page.offset)
      return rows.map((r) => toCampaignListItem(r, archiveUrl(r.id)))
    },

    /** A new draft (status 0); a given scheduled_at is only stored, scheduling is its own action. */
    async create(accountId: number, body: CampaignBodyT) {
      const values = await campaignValues(ctx, accountId, body)
      const now = ctx.clock.now()
      const row = await repo.insertCampaign(ctx.db, accountId, {
        ...values,
        status: 0,
        createdAt: now,
        changedAt: now,
      })
      return toCampaignSaved(row, archiveUrl(row.id))
    },

    /** Statistics are part of every detail: zeros until the campaign is sent. */
    async detail(accountId: number, id: number) {
      const row = await requireCampaign(ctx, accountId, id)
      const stats = await readCampaignDetailStats(ctx.db, row.id)
      return toCampaignDetail(row, archiveUrl(row.id), stats)
    },

    /**
     * Replaces the content and targets while the campaign is a draft or scheduled; its status stays. A
     * scheduled campaign keeps a send time: clearing it is `DELETE /campaigns/{id}/schedule`.
     */
    async update(accountId: number, id: number, body: CampaignBodyT) {
      const current = await requireCampaign(ctx, accountId, id)
      if (!isEditable(current)) throw fieldError('status', NOT_EDITABLE)
      const values = await campaignValues(ctx, accountId, body)
      const clearsSchedule = values.scheduledAt === null
      // Checked again by the statement itself: the campaign may have been sent or scheduled since it was read.
      const statuses: readonly CampaignStatus[] = clearsSchedule ? [0] : repo.EDITABLE_STATUSES
      const row = await repo.updateEditableCampaign(ctx.db, accountId, id, statuses, {
        ...values,
        changedAt: ctx.clock.now(),
      })
      if (!row) return explainMiss(accountId, id, clearsSchedule)
      return toCampaignSaved(row, archiveUrl(row.id))
    },

    async remove(accountId: number, id: number) {
      if (!(await repo.deleteEditableCampaign(ctx.db, accountId, id))) await explainMiss(accountId, id)
      return { deleted: true }
    },
  }
}
