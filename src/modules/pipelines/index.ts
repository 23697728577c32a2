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
export { durationMs, isWaitingNode, WEBHOOK_METHODS } from './node-properties.js'
