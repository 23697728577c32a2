export {
  feedProducts,
  feedProductsStaging,
  feeds,
  type FeedFormat,
  type FeedKind,
  type FeedRefreshState,
} from './feeds.table.js'
export { feedProductsByIds, type FeedProductRow } from './feeds.repo.js'
export { FEED_ITEM_LIMIT, runFeedRefresh } from './feed-refresh.js'
