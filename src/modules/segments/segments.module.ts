import type { ModuleDef } from '../registry.js'
import { segmentRoutes } from './segments.routes.js'

/** Segments of a list: saved conditions (contract §6 language) that campaigns can target. */
export const segmentsModule: ModuleDef = { name: 'segments', apiRoutes: segmentRoutes }
