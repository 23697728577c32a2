import type { AppContext } from '../../core/context.js'
import { fieldError, HttpError, notFound } from '../../core/http/errors.js'
import { recommend } from './recommend.js'
import { wakeRecommenderTrainers } from './recommender-trainer.js'
import {
  deleteRecommender,
  feedOfAccount,
  findRecommender,
  insertRecommender,
  listRecommenders,
  updateSettings,
} from './recommenders.repo.js'
import {
  DEFAULT_LIMIT,
  toRecommender,
  type CreateInput,
  type RecommenderT,
  type UpdateInput,
} from './recommenders.schemas.js'
import type { RecommenderSettings } from './recommenders.table.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

export const DUPLICATE = 'A recommender for this shop and feed already exists.'

const sameMonths = (a: number[], b: number[]) =>
  a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',')

/** Recommenders (api.md, contract §8): the resource; training runs in recommender-trainer.ts. */
export function createRecommenderService(ctx: Ctx) {
  async function get(accountId: number, id: number) {
    const row = await findRecommender(ctx.db, accountId, id)
    if (!row) throw notFound('Recommender not found')
    return row
  }

  return {
    async create(accountId: number, input: CreateInput): Promise<RecommenderT[]> {
      if (!(await feedOfAccount(ctx.db, accountId, input.feed_id)))
        throw fieldError('feed_id', 'The selected feed id is invalid.')
      // Trimmed as a transaction's `shop` is when stored: " shop.cz " names the shop whose orders say shop.cz.
      const shop = input.shop_id.trim()
      const row = await insertRecommender(ctx.db, accountId, shop, input.feed_id, ctx.clock.now())
      if (!row) throw new HttpError(422, { errors: [DUPLICATE] })
      wakeRecommenderTrainers()
      return [toRecommender(row)]
    },

    async list(accountId: number): Promise<RecommenderT[]> {
      return (await listRecommenders(ctx.db, accountId)).map(toRecommender)
    },

    async get(accountId: number, id: number): Promise<RecommenderT> {
      return toRecommender(await get(accountId, id))
    },

    async update(accountId: number, id: number, input: UpdateInput): Promise<RecommenderT> {
      const row = await get(accountId, id)
      const given = Array.isArray(input.settings) ? {} : input.settings
      const settings: RecommenderSettings = {
        filtered_products: given.filtered_products ?? row.settings.filtered_products ?? [],
        filtered_categories: given.filtered_categories ?? row.settings.filtered_categories ?? [],
        included_months: given.included_months ?? row.settings.included_months ?? [],
      }
      const retrain = !sameMonths(settings.included_months, row.settings.included_months ?? [])
      const updated = await updateSettings(ctx.db, accountId, id, settings, retrain)
      if (!updated) throw notFound('Recommender not found')
      if (retrain) wakeRecommenderTrainers()
      return toRecommender(updated)
    },

    async remove(accountId: number, id: number): Promise<{ deleted: boolean }> {
      if (!(await deleteRecommender(ctx.db, accountId, id))) throw notFound('Recommender not found')
      return { deleted: true }
    },

    async recommendations(accountId: number, id: number, email: string | undefined, limit = DEFAULT_LIMIT) {
      const row = await get(accountId, id)
      const who = (email ?? '').trim().toLowerCase()
      const rows = (await recommend(ctx.db, row, [who], limit)).get(who) ?? []
      return {
        products: rows.map((r) => ({
          id: r.id,
          title: r.title,
          url: r.url,
          image: r.image,
          price: r.price === null ? null : Number(r.price),
          score: r.score,
        })),
      }
    },
  }
}
