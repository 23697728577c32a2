import type { AppContext } from '../../core/context.js'
import {
  analyzeModels,
  claimForTraining,
  dueRecommenders,
  feedProductCount,
  markFailed,
  markTrained,
  rebuildModel,
} from './recommender-train.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { startPollLoop } from '../../core/poll-loop.js'
import { logRoundFailure } from '../../core/round-failure.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'log'>

/** How often a trainer looks for recommenders to train. */
export const POLL_MS = 15_000
/** A recommender whose data changed is retrained at most this often (debounce of a busy shop's purchases). */
export const RETRAIN_AFTER_MS = 60_000
/** A claim older than this belongs to a trainer that died: another one takes it over. */
export const STALE_CLAIM_MS = 10 * 60_000
/** Recommenders trained per round: one round never runs for long. */
const PER_ROUND = 10

export const NO_PRODUCTS = 'The feed has no products yet; training starts again after its refresh.'

/** Trains one claimed recommender: the new model replaces the old in one transaction (readers see either). */
async function train(ctx: Ctx, id: number): Promise<boolean> {
  const now = ctx.clock.now()
  const staleBefore = new Date(now.getTime() - STALE_CLAIM_MS)
  const claimed = await claimForTraining(ctx.db, id, now, staleBefore)
  if (!claimed) return false
  const { version, ...row } = claimed
  try {
    if ((await feedProductCount(ctx.db, row.feed_id)) === 0) {
      await markFailed(ctx.db, id, version, NO_PRODUCTS)
      return true
    }
    await retriedTransaction(ctx.db, async (tx) => {
      const built = await rebuildModel(tx, row)
      await markTrained(tx, id, version, ctx.clock.now())
      ctx.log.info({ recommenderId: id, ...built }, 'recommender trained')
    })
    await analyzeModels(ctx.db).catch((err: unknown) =>
      ctx.log.warn({ err, recommenderId: id }, 'could not analyze the recommender models'),
    )
  } catch (err) {
    ctx.log.error({ err, recommenderId: id }, 'recommender training failed')
    await markFailed(
      ctx.db,
      id,
      version,
      'Training failed on an internal error; it is tried again when its data changes.',
    )
  }
  return true
}

/** One round: trains every recommender that is due (new, changed and debounced, or abandoned); how many. */
export async function trainDueRecommenders(ctx: Ctx): Promise<number> {
  const now = ctx.clock.now().getTime()
  const due = await dueRecommenders(
    ctx.db,
    new Date(now - RETRAIN_AFTER_MS),
    new Date(now - STALE_CLAIM_MS),
    PER_ROUND,
  )
  let trained = 0
  for (const { id } of due) if (await train(ctx, id)) trained++
  return trained
}

const wakers = new Set<() => void>()

/** Wakes this process's trainers (a recommender was just created or changed); others find it on their poll. */
export function wakeRecommenderTrainers(): void {
  for (const w of wakers) w()
}

/** The worker loop: a round every POLL_MS (at once again while rounds find work), until stopped. */
export function startRecommenderTrainer(ctx: Ctx, pollMs = POLL_MS): { stop(): Promise<void> } {
  const loop = startPollLoop(
    async () => (await trainDueRecommenders(ctx)) > 0,
    pollMs,
    (err) => logRoundFailure(ctx.log, err, 'recommender trainer'),
  )
  const waker = () => loop.wake()
  wakers.add(waker)
  return {
    async stop() {
      wakers.delete(waker)
      await loop.stop()
    },
  }
}
