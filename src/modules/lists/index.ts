export { findUnsubscribePage, listSenders, ownListIds } from './lists.repo.js'
export { requireList } from './lists.service.js'
export type { ListRow } from './lists.schemas.js'
export { lists } from './lists.table.js'

export type { SegmentsOf } from './lists.service.js'
