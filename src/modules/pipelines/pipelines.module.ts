import type { ModuleDef } from '../registry.js'
import { pipelineRoutes } from './pipelines.routes.js'

/** Automations as a resource: CRUD of pipelines and their action nodes, with graph validation. */
export const pipelinesModule: ModuleDef = { name: 'pipelines', apiRoutes: pipelineRoutes }
