import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import {
  campaignLog,
  deliveryOf,
  percent,
  ratedStats,
  readCounters,
  readScopeCounters,
  scopeConversions,
  readStatsDetail,
  type CampaignLogQueryT,
} from '../events/index.js'
import { normalizeEmail } from '../../core/http/email.js'
import { engagedInRange } from './campaign-stats.repo.js'
import { parseFromDate, parseStatsRange, type StatsRange } from './campaign-stats.range.js'
import {
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
    readScopeCounters(ex, { campaignId }),
    scopeConversions(ex, { campaignId }),
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
     * as Ecomail's, up to 5000 as for automations), `next_page_url` as readStatsDetail builds it.
     */
    async detail(accountId: number, campaignId: number, query: StatsDetailQueryT) {
      const from = parseFromDate(query.from_date, ctx.clock.now())
      const id = await ownCampaign(accountId, campaignId)
      return readStatsDetail(
        ctx.db,
        { campaignId: id },
        query,
        from,
        `${ctx.config.publicUrl}/campaigns/${id}/stats-detail`,
      )
    },

    /**
     * `GET /campaigns/{id}/log`, or with no campaign `GET /campaigns/log` (all of the account's, or the one its
     * `campaign_id` names: another account's is a 404 there too). `email` keeps one recipient's events. A
     * blank filter is none, as a form's empty field.
     */
    async log(accountId: number, campaignId: number | null, query: CampaignLogQueryT) {
      const asked = campaignId ?? (query.campaign_id || null)
      const id = asked === null ? null : await ownCampaign(accountId, asked)
      const email = query.email?.trim() ? normalizeEmail(query.email) : null
      return campaignLog(ctx.db, accountId, { campaignId: id, email }, query)
    },
  }
}
