import type { AppContext } from '../../core/context.js'
import { parseStatsRange } from '../../core/http/stats-range.js'
import { ratedStats, readKindCounters, type CountedKind } from '../events/index.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** The account's mail of one kind, sent within the range when one is given. */
export async function mailStats(
  ctx: Ctx,
  accountId: number,
  kind: CountedKind,
  query: { from_date?: string; to_date?: string },
) {
  const range = parseStatsRange(query, ctx.clock.now())
  return { stats: ratedStats(await readKindCounters(ctx.db, accountId, kind, range)) }
}
