import type { ModuleDef } from '../registry.js'
import { listRoutes } from './lists.routes.js'

export { ownListIds } from './lists.repo.js'
export { requireList } from './lists.service.js'
export type { ListRow } from './lists.schemas.js'
export { lists } from './lists.table.js'

export const listsModule: ModuleDef = { name: 'lists', apiRoutes: listRoutes }
