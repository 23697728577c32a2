// TEMP: replaced by the autostats version at merge
import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { Condition } from '../pipelines/index.js'

export interface ConditionSubject {
  accountId: number
  pipelineId: number
  runId: number
  contactId: number | null
  email: string
  /** When the run started: opened/clicked look at this run's mail nodes only. */
  runStartedAt: Date
}

/** Only `{tag}` and `{field, op:'eq'}` until the full evaluator lands; anything else is false. */
export async function evaluateCondition(
  ex: Executor,
  s: ConditionSubject,
  c: Condition,
  _now: Date,
): Promise<boolean> {
  if ('tag' in c) {
    const row = await queryOne<{ ok: boolean }>(
      ex,
      sql`SELECT ${c.tag} = ANY(tags) AS ok FROM contacts WHERE account_id = ${s.accountId} AND email = ${s.email}`,
    )
    return row?.ok === true
  }
  if ('field' in c && c.op === 'eq') {
    const row = await queryOne<{ v: string | null }>(
      ex,
      sql`SELECT coalesce(to_jsonb(c) ->> ${c.field}, c.custom_fields ->> ${c.field}) AS v
          FROM contacts c WHERE account_id = ${s.accountId} AND email = ${s.email}`,
    )
    return row?.v === String(c.value)
  }
  return false
}
