import { Type, type Static } from '@sinclair/typebox'
import {
  commonErrors,
  ErrorString,
  MessageError,
  Nullable,
  PageNumber,
  PerPage,
} from '../../core/http/schemas.js'

/** Wire shapes of the feed routes (contract §8). Times are `YYYY-MM-DD HH:MM:SS` UTC, as api.md's resources. */

export const MAX_PRODUCTS_PAGE = 5000
export const DEFAULT_PRODUCTS_PAGE = 20

const Format = Type.Union([Type.Literal('heureka'), Type.Literal('google'), Type.Literal('csv')], {
  description:
    'heureka (Heureka XML), google (Google Merchant RSS or Atom), csv; absent: detected at refresh',
})

export const CreateFeedBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'http(s) URL of the feed file' }),
  kind: Type.Optional(Type.Union([Type.Literal('product'), Type.Literal('data')], { default: 'product' })),
  format: Type.Optional(Nullable(Format)),
})
export type CreateFeedBodyT = Static<typeof CreateFeedBody>

export const FeedObject = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  url: Type.String(),
  kind: Type.String({ description: 'product or data' }),
  format: Nullable(Type.String({ description: 'heureka, google or csv; null until given or detected' })),
  state: Type.String({ description: 'never, queued, refreshing, ok or failed' }),
  error: Nullable(Type.String({ description: 'why the last refresh failed (the previous products stay)' })),
  item_count: Type.Integer({ description: 'products stored from the last good refresh' }),
  last_refresh: Nullable(Type.String({ description: 'time of the last good refresh' })),
  refresh_requested_at: Nullable(Type.String({ description: 'time of the last refresh request' })),
  auto_refresh_at: Nullable(
    Type.String({
      description: 'time of the next automatic download (FEED_AUTO_REFRESH_HOURS); null when they are off',
    }),
  ),
  created_at: Type.String(),
})
export type FeedObjectT = Static<typeof FeedObject>

export const ProductsQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_PRODUCTS_PAGE, DEFAULT_PRODUCTS_PAGE),
})
export type ProductsQueryT = Static<typeof ProductsQuery>

export const FeedProductObject = Type.Object({
  id: Type.String({ description: "the shop's product id (transaction items' code)" }),
  title: Type.String(),
  url: Type.String(),
  image: Type.String(),
  price: Nullable(Type.Number()),
  categories: Type.Array(Type.String()),
})

export const ProductsPage = Type.Object({
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
  data: Type.Array(FeedProductObject),
})

export const RefreshReply = Type.Object({ message: Type.String() })

/** Refresh: 403 below the marketer plan, 429 `{errors}` within the hour (or `{message}` from the per-key limit). */
export const refreshErrors = {
  ...commonErrors,
  403: ErrorString,
  429: Type.Union([ErrorString, MessageError]),
}
