export { automationLog, automationRuns, type RunStatus } from './automations.table.js'
export { evaluateCondition, compileCondition, type ConditionSubject } from './conditions.js'
export { readPipelineStats } from './automation-stats.service.js'
export { runAutomations } from './engine-runner.js'
