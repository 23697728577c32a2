import type { Executor } from '../../core/db/client.js'
import type { Condition } from '../pipelines/index.js'
import {
  CONDITION_LIMITS,
  FIELD_OPS,
  type ConditionValue,
  type FieldCondition,
  type FieldOp,
} from '../segments/index.js'
import {
  evaluateCompiled,
  evaluateCompiledBatch,
  type CompiledCondition,
  type CompiledLeaf,
} from './conditions.repo.js'

/**
 * The condition language of contract §6 as check and goal nodes use it: `evaluateCondition` answers whether
 * a run's subject meets a condition now, in one SQL statement (conditions.repo.ts). The stored condition was
 * validated when the pipeline was saved; this still reads it defensively (a malformed leaf is false, never a
 * thrown error), because a run must move on whatever an old graph holds.
 */

export interface ConditionSubject {
  accountId: number
  /** The run: opened/clicked look at the mail it recorded (its state), nothing else. */
  runId: number
  contactId: number | null
  email: string
}

const FALSE: CompiledCondition = { leaf: { kind: 'constant', value: false } }
const leaf = (l: CompiledLeaf): CompiledCondition => ({ leaf: l })

/** A number as text (`12`, `-3.5`); such a value compares numerically with a numeric field (15 digits at most, so exact). */
const NUMERIC = /^\s*-?\d{1,15}(\.\d{1,15})?\s*$/

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * A field comparison as the segments compiler takes it: field names lower-cased (custom field keys are stored
 * so), numeric text made a number so that both numeric sides compare as numbers (`"10" gt "9"`), an address
 * lower-cased as addresses are stored.
 */
function fieldLeaf(c: Record<string, unknown>): CompiledCondition {
  const field = typeof c.field === 'string' ? c.field.trim().toLowerCase() : ''
  const op = c.op
  if (field === '' || typeof op !== 'string' || !(FIELD_OPS as readonly string[]).includes(op)) return FALSE
  const fieldOp = op as FieldOp
  if (fieldOp === 'exists') {
    const cond: FieldCondition =
      c.value === false ? { field, op: fieldOp, value: false } : { field, op: fieldOp }
    return leaf({ kind: 'segment', condition: cond })
  }
  let value: ConditionValue
  const raw = c.value
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return FALSE
    value = raw
  } else if (typeof raw === 'boolean') {
    value = fieldOp === 'eq' || fieldOp === 'neq' ? raw : String(raw)
  } else if (typeof raw === 'string') {
    if (field === 'email') value = raw.trim().toLowerCase()
    else if (fieldOp !== 'contains' && NUMERIC.test(raw)) value = Number(raw)
    else value = raw
  } else if (raw === undefined || raw === null) {
    value = ''
  } else {
    value = JSON.stringify(raw)
  }
  if (fieldOp === 'contains' && value === '') return FALSE
  return leaf({ kind: 'segment', condition: { field, op: fieldOp, value } })
}

const text = (v: unknown): string | undefined => {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  if (typeof v !== 'string' || v.trim() === '') return undefined
  return v.trim()
}

const integer = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\s*-?\d{1,10}\s*$/.test(v) ? Number(v) : v
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined
}

/** The stored condition as the SQL compiler takes it; `depth` bounds a hand-made cyclic or deep input. */
export function compileCondition(input: Condition | unknown, depth = 0): CompiledCondition {
  if (!isObject(input) || depth > CONDITION_LIMITS.depth * 2) return FALSE
  if ('all' in input)
    return Array.isArray(input.all) ? { all: input.all.map((c) => compileCondition(c, depth + 1)) } : FALSE
  if ('any' in input)
    return Array.isArray(input.any) ? { any: input.any.map((c) => compileCondition(c, depth + 1)) } : FALSE
  if ('not' in input) return { not: compileCondition(input.not, depth + 1) }
  if ('field' in input) return fieldLeaf(input)
  if ('tag' in input) {
    const tag = text(input.tag)
    return tag === undefined ? FALSE : leaf({ kind: 'segment', condition: { tag } })
  }
  if ('opened' in input || 'clicked' in input) {
    const opened = 'opened' in input
    const nodeId = text(opened ? input.opened : input.clicked)
    if (nodeId === undefined) return FALSE
    return leaf({ kind: 'mail', column: opened ? 'first_open_at' : 'first_click_at', nodeId })
  }
  if ('purchased' in input) {
    const days = isObject(input.purchased) ? Number(input.purchased.days) : NaN
    if (!Number.isFinite(days) || days < 0) return FALSE
    return leaf({ kind: 'purchased', days: Math.min(days, CONDITION_LIMITS.days) })
  }
  if ('event' in input) {
    if (!isObject(input.event)) return FALSE
    return leaf({ kind: 'event', category: text(input.event.category), action: text(input.event.action) })
  }
  if ('in_list' in input) {
    const listId = integer(input.in_list)
    return listId === undefined ? FALSE : leaf({ kind: 'segment', condition: { in_list: listId } })
  }
  return FALSE
}

/**
 * Whether the subject meets `c` at `now` (the engine's clock: `purchased` counts back from it). `opened` and
 * `clicked` name a mail node of this pipeline and look only at this run's mail from it.
 */
export function evaluateCondition(
  ex: Executor,
  s: ConditionSubject,
  c: Condition,
  now: Date,
): Promise<boolean> {
  return evaluateCompiled(ex, compileCondition(c), {
    accountId: s.accountId,
    runId: s.runId,
    contactId: s.contactId,
    email: s.email.trim().toLowerCase(),
    now,
  })
}

/**
 * `evaluateCondition` for many runs of one pipeline at once, in one statement: the ids of the runs whose subject
 * meets `c` at `now`. A check or goal node executing for a group of due runs asks once, not once per run.
 */
export function evaluateConditionBatch(
  ex: Executor,
  subjects: readonly ConditionSubject[],
  c: Condition,
  now: Date,
): Promise<Set<number>> {
  const first = subjects[0]
  if (!first) return Promise.resolve(new Set())
  return evaluateCompiledBatch(
    ex,
    compileCondition(c),
    { accountId: first.accountId, now },
    subjects.map((s) => ({
      runId: s.runId,
      contactId: s.contactId,
      email: s.email.trim().toLowerCase(),
    })),
  )
}
