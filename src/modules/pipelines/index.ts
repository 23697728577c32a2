import type { ModuleDef } from '../registry.js'
import { pipelineRoutes } from './pipelines.routes.js'

export { pipelines } from './pipelines.table.js'
export {
  activePipelinesFor,
  findPipeline,
  insertPipeline,
  pipelineById,
  type NewPipeline,
  type PipelineRow,
} from './pipelines.repo.js'
export * from './pipeline-graph.js'
export {
  checkPipelineShape,
  PIPELINE_LIMITS,
  validatePipeline,
  type PipelineRefs,
  type RefLookup,
  type ValidationResult,
  type ValidPipeline,
} from './pipeline-validate.js'
export { isWaitingNode } from './node-properties.js'

/** Automations as a resource: CRUD of pipelines and their action nodes, with graph validation. */
export const pipelinesModule: ModuleDef = { name: 'pipelines', apiRoutes: pipelineRoutes }
