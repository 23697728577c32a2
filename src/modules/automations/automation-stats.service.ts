import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { notFound } from '../../core/http/errors.js'
import { parseFromDate, parseStatsRange, type StatsRange } from '../../core/http/stats-range.js'
import { deliveryOf, percent, readScopeCounters, scopeConversions, readStatsDetail } from '../events/index.js'
import { findPipeline } from '../pipelines/index.js'
import { pipelineRangeCounts, pipelineRunCounts } from './automation-stats.repo.js'
import {
  type PipelineDetailQueryT,
  type PipelineStatsQueryT,
  type PipelineStatsT,
} from './automation-stats.schemas.js'

/**
 * api.md "Automation statistics" with contract §5's definitions (the campaign ones: `send` is the delivery,
 * rates through the same `percent`): counters of all the pipeline's mail nodes, runs started and ended, and
 * conversions from purchases; with a range also the mails opened, clicked and injected within it.
 */
export async function readPipelineStats(
  ex: Executor,
  accountId: number,
  pipelineId: number,
  range?: StatsRange,
): Promise<PipelineStatsT> {
  const [c, runs, conv, inRange] = await Promise.all([
    readScopeCounters(ex, { pipelineId }),
    pipelineRunCounts(ex, pipelineId),
    scopeConversions(ex, { pipelineId }),
    range ? pipelineRangeCounts(ex, pipelineId, range.from, range.to) : undefined,
  ])
  const send = deliveryOf(c)
  return {
    triggered: runs.triggered,
    ended: runs.ended,
    inject: c.inject,
    send,
    delivery_rate: percent(send, c.inject),
    open: c.open,
    total_open: c.total_open,
    not_opened: Math.max(0, send - c.open),
    open_rate: percent(c.open, send),
    click: c.click,
    total_click: c.total_click,
    click_rate: percent(c.click, send),
    soft_bounce: c.soft_bounce,
    hard_bounce: c.hard_bounce,
    bounce: c.bounce,
    bounce_rate: percent(c.bounce, c.inject),
    spam: c.spam,
    unsub: c.unsub,
    conversions: conv.conversions,
    conversions_value: conv.value,
    ...(inRange
      ? { open_in_range: inRange.open, click_in_range: inRange.click, inject_in_range: inRange.inject }
      : {}),
  }
}

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>

export function createAutomationStatsService(ctx: Ctx) {
  const ownPipeline = async (accountId: number, pipelineId: number) => {
    const pipeline = await findPipeline(ctx.db, accountId, pipelineId)
    if (!pipeline) throw notFound('Pipeline not found')
    return pipeline.id
  }

  return {
    /** `GET /pipelines/{id}/stats`; the range is checked before the pipeline (a 422 needs no lookup). */
    async stats(accountId: number, pipelineId: number, query: PipelineStatsQueryT) {
      const range = parseStatsRange(query, ctx.clock.now())
      const id = await ownPipeline(accountId, pipelineId)
      return { stats: await readPipelineStats(ctx.db, accountId, id, range) }
    },

    /**
     * `GET /pipelines/{id}/stats-detail`, as the campaign one: `per_page` recipients (default 100, at most
     * 5000), `next_page_url` absolute under PUBLIC_URL carrying this request's filters. `POST` with
     * `{"emails": [...]}` asks for those recipients only.
     */
    async detail(accountId: number, pipelineId: number, query: PipelineDetailQueryT, emails?: string[]) {
      const from = parseFromDate(query.from_date, ctx.clock.now())
      const id = await ownPipeline(accountId, pipelineId)
      return readStatsDetail(
        ctx.db,
        { pipelineId: id },
        query,
        from,
        `${ctx.config.publicUrl}/pipelines/${id}/stats-detail`,
        emails,
      )
    },
  }
}
