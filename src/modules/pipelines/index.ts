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
