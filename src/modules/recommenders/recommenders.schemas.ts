import { Type, type Static } from '@sinclair/typebox'
import { EmptyArray, Nullable } from '../../core/http/schemas.js'
import { sqlDateTime } from '../../core/http/formats.js'
import type { RecommenderRow } from './recommenders.repo.js'

/** Products and categories a recommender may leave out: a long list, still one small jsonb value. */
export const MAX_FILTERED = 1000
export const DEFAULT_LIMIT = 5
export const MAX_LIMIT = 50

export const CreateBody = Type.Object({
  shop_id: Type.String({ maxLength: 255, description: "the `shop` of the account's transactions" }),
  feed_id: Type.Integer({
    minimum: 1,
    maximum: 2147483647,
    description: "one of the account's product feeds",
  }),
})
export type CreateInput = Static<typeof CreateBody>

const SettingsIn = Type.Object({
  filtered_products: Type.Optional(
    Type.Array(Type.String({ maxLength: 255 }), {
      maxItems: MAX_FILTERED,
      description: 'product ids never offered',
    }),
  ),
  filtered_categories: Type.Optional(
    Type.Array(Type.String({ maxLength: 255 }), {
      maxItems: MAX_FILTERED,
      description:
        'categories never offered: a product is left out when any segment of its category path is one',
    }),
  ),
  included_months: Type.Optional(
    Type.Array(Type.Integer({ minimum: 1, maximum: 12 }), {
      maxItems: 12,
      uniqueItems: true,
      description:
        'calendar months (1 = January … 12 = December, UTC) of the purchases learnt from; empty: all',
    }),
  ),
})

export const UpdateBody = Type.Object({
  settings: Type.Union([SettingsIn, EmptyArray], {
    description:
      'the fields given replace the stored ones; changing included_months retrains the recommender',
  }),
})
export type UpdateInput = Static<typeof UpdateBody>

export const Settings = Type.Object({
  filtered_products: Type.Array(Type.String()),
  filtered_categories: Type.Array(Type.String()),
  included_months: Type.Array(Type.Integer()),
})

export const Recommender = Type.Object({
  recommender_id: Type.String(),
  feed_id: Type.Integer(),
  shop_id: Type.String(),
  last_trained_timestamp: Nullable(Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })),
  status: Type.String({ description: 'created, training, ready or failed' }),
  settings: Settings,
  error: Nullable(Type.String({ description: 'why the last training failed (status failed)' })),
})
export type RecommenderT = Static<typeof Recommender>

export const RecommendationsQuery = Type.Object({
  email: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'whose purchases to start from; none or unknown: bestsellers',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
})

export const Product = Type.Object({
  id: Type.String(),
  title: Type.String(),
  url: Type.String(),
  image: Type.String(),
  price: Nullable(Type.Number()),
  score: Type.Integer({
    description:
      'orders holding the product with one the person bought (summed), or all orders holding it for bestsellers',
  }),
})
export const Recommendations = Type.Object({ products: Type.Array(Product) })

export function toRecommender(row: RecommenderRow): RecommenderT {
  return {
    recommender_id: String(row.id),
    feed_id: row.feed_id,
    shop_id: row.shop_id,
    last_trained_timestamp: row.last_trained_at ? sqlDateTime(new Date(row.last_trained_at)) : null,
    status: row.status,
    settings: {
      filtered_products: row.settings.filtered_products ?? [],
      filtered_categories: row.settings.filtered_categories ?? [],
      included_months: row.settings.included_months ?? [],
    },
    error: row.status === 'failed' ? row.error : null,
  }
}
