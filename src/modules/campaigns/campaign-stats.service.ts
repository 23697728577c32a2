import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { normalizeEmail } from '../../core/http/email.js'
import { toPage } from '../../core/db/pagination.js'
import {
  campaignLog,
  deliveryOf,
  percent,
  ratedStats,
  readCounters,
  type EmailLogQueryT,
} from '../events/index.js'
import { campaignConversions, engagedInRange, statsDetailPage } from './campaign-stats.repo.js'
import { parseFromDate, parseStatsRange, type StatsRange } from './campaign-stats.range.js'
import {
  DEFAULT_STATS_DETAIL_PAGE,
  type CampaignDetailStatsT,
  type CampaignStatsQueryT,
  type CampaignStatsT,
  type StatsDetailQueryT,
} from './campaign-stats.schemas.js'
import { requireCampaign } from './require-campaign.js'

// Re-exported for the tests that prove the rounding on campaign figures.
export { percent }

/**
 * api.md "Campaign statistics": the counters kept with the events, plus conversions from the transactions;
 * with a range, recipients who opened / clicked within it (`from` inclusive, `to` exclusive).
 */
export async function readCampaignStats(
  ex: Executor,
  campaignId: number,
  range?: StatsRange,
): Promise<CampaignStatsT> {
  const [c, conv, opened, clicked] = await Promise.all([
    readCounters(ex, { campaignId }),
    campaignConversions(ex, campaignId),
    range ? engagedInRange(ex, campaignId, 'open', range.from, range.to) : undefined,
    range ? engagedInRange(ex, campaignId, 'click', range.from, range.to) : undefined,
  ])
  return {
    ...ratedStats(c),
    conversions: conv.conversions,
    conversions_value: conv.value,
    ...(opened !== undefined && clicked !== undefined
      ? {
          opened_in_range: opened === 'all' ? c.open : opened,
          clicked_in_range: clicked === 'all' ? c.click : clicked,
        }
      : {}),
  }
}

/** The `stats` of the campaign detail (api.md "Campaign (detail)"): counters only, one small query. */
export async function readCampaignDetailStats(
  ex: Executor,
  campaignId: number,
): Promise<CampaignDetailStatsT> {
  const c = await readCounters(ex, { campaignId })
  const delivered = deliveryOf(c)
  return {
    inject: c.inject,
    send: delivered,
    delivered,
    open: c.open,
    total_open: c.total_open,
    click: c.click,
    total_click: c.total_click,
    hard_bounce: c.hard_bounce,
    spam: c.spam,
    unsub: c.unsub,
    openrate: percent(c.open, delivered),
    clickrate: percent(c.click, delivered),
    delivery_rate: percent(delivered, c.inject),
  }
}

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>

export function createCampaignStatsService(ctx: Ctx) {
  const ownCampaign = async (accountId: number, campaignId: number) =>
    (await requireCampaign(ctx, accountId, campaignId)).id

  return {
    /** `GET /campaigns/{id}/stats` */
    async stats(accountId: number, campaignId: number, query: CampaignStatsQueryT) {
      const range = parseStatsRange(query, ctx.clock.now())
      const id = await ownCampaign(accountId, campaignId)
      return { stats: await readCampaignStats(ctx.db, id, range) }
    },

    /**
     * `GET /campaigns/{id}/stats-detail`: recipients with their event counts, `per_page` of them (default 100
     * as Ecomail's, up to 5000 as for automations). `next_page_url` is absolute under PUBLIC_URL (the address
     * clients reach the service at; a request's Host can be an internal one behind a proxy) and carries the
     * filters of this request.
     */
    async detail(accountId: number, campaignId: number, query: StatsDetailQueryT) {
      const from = parseFromDate(query.from_date, ctx.clock.now())
      const id = await ownCampaign(accountId, campaignId)
      const page = toPage(query.page, query.per_page, DEFAULT_STATS_DETAIL_PAGE)
      const email = query.email === undefined ? undefined : normalizeEmail(query.email)
      const { rows, total } = await statsDetailPage(
        ctx.db,
        id,
        { email, event: query.event, from },
        page.perPage,
        page.offset,
      )
      const subscribers: Record<string, Omit<(typeof rows)[number], 'email'>> = {}
      for (const { email: address, ...counts } of rows) subscribers[address] = counts
      let next: string | null = null
      if (page.offset + page.perPage < total) {
        const params = new URLSearchParams({ page: String(page.page + 1) })
        if (page.perPage !== DEFAULT_STATS_DETAIL_PAGE) params.set('per_page', String(page.perPage))
        if (email !== undefined) params.set('email', email)
        if (query.event !== undefined) params.set('event', query.event)
        if (query.from_date) params.set('from_date', query.from_date.trim())
        next = `${ctx.config.publicUrl}/campaigns/${id}/stats-detail?${params.toString()}`
      }
      return { total, per_page: page.perPage, next_page_url: next, subscribers }
    },

    /** `GET /campaigns/{id}/log`, or with no campaign `GET /campaigns/log` (all of the account's). */
    async log(accountId: number, campaignId: number | null, query: EmailLogQueryT) {
      const id = campaignId === null ? null : await ownCampaign(accountId, campaignId)
      return campaignLog(ctx.db, accountId, id, query)
    },
  }
}
