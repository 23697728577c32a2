export { automationLog, automationRuns, type RunStatus } from './automations.table.js'
