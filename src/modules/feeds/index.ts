export { feedProducts, feeds, type FeedFormat, type FeedKind } from './feeds.table.js'
