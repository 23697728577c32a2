import type { ErasureStep } from '../subscribers/index.js'
import { pseudonymiseRuns } from './runs.repo.js'

/** The automations' part of a GDPR erasure (handed to the subscribers module by the module list). */
export const eraseAutomationRuns: ErasureStep = (tx, e) =>
  pseudonymiseRuns(tx, e.accountId, e.email, e.pseudonym, e.now)
