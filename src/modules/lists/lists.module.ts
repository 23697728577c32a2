import type { AppContext } from '../../core/context.js'
import type { ModuleDef } from '../registry.js'
import { listRoutes } from './lists.routes.js'
import type { SegmentsOf } from './lists.service.js'

/**
 * Lists. The module list passes the segments of a list for `GET /lists/{id}`, so lists never imports the
 * segments module (which builds on lists).
 */
export function createListsModule(segmentsOf: (ctx: AppContext) => SegmentsOf): ModuleDef {
  return { name: 'lists', apiRoutes: (app, ctx) => listRoutes(app, ctx, segmentsOf(ctx)) }
}
