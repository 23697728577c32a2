import { sql, type SQL } from 'drizzle-orm'
import { DAY_MS } from '../../core/clock.js'
import { countryCode } from '../../core/http/country-names.js'
import { CONTACT_FIELDS, type Condition, type FieldCondition } from './condition.js'

/**
 * Compiles a Condition (condition.ts) to a SQL boolean over a contact row aliased `c` (table contacts). Every
 * user value is a bound parameter; the only identifiers written into the text are contact column names from the
 * fixed CONTACT_FIELDS set. Every piece yields true or false, never NULL, so `not`, `all` and `any` follow
 * two-valued logic: a contact without the field matches `neq` and `not`.
 */

export interface ConditionSqlOptions {
  accountId: number
  /** The moment "now" means for `purchased` (passed in so tests can run a fake clock; never SQL now()). */
  now: Date
  /**
   * Narrows `opened`/`clicked` to mail of one pipeline. Node ids are only unique within a pipeline, so the
   * automation engine passes its own; segments leave it out and match the node id in any pipeline.
   */
  pipelineId?: number
}

/** A number as text (`12`, `-3.5`, with blanks around): only such text is cast, so the cast never fails. */
const NUMERIC_TEXT = `'^[[:space:]]*-?[0-9]+([.][0-9]+)?[[:space:]]*$'`

/** NUMERIC_TEXT in JavaScript: a value given as such text (PHP sends numbers so) compares as a number in gt/lt. */
const NUMERIC_VALUE = /^\s*-?[0-9]+([.][0-9]+)?\s*$/

/**
 * The field's value as text: a contact column (rating, the one that is not text, as its digits), or a custom
 * field (a scalar or `{value, type}`).
 */
function fieldText(name: string): SQL {
  if (CONTACT_FIELDS.has(name)) return sql`c.${sql.identifier(name)}`
  if (name === 'rating') return sql`c.rating::text`
  return sql`(CASE WHEN jsonb_typeof(c.custom_fields -> ${name}::text) = 'object'
      THEN c.custom_fields -> ${name}::text ->> 'value'
      ELSE c.custom_fields ->> ${name}::text END)`
}

function asNumber(text: SQL): SQL {
  return sql`(CASE WHEN ${text} ~ ${sql.raw(NUMERIC_TEXT)} THEN trim(${text})::numeric END)`
}

const definite = (expr: SQL) => sql`coalesce(${expr}, false)`

function equals(x: SQL, value: string | number | boolean): SQL {
  if (typeof value === 'number') return definite(sql`${asNumber(x)} = ${value}::numeric`)
  if (typeof value === 'boolean') return definite(sql`lower(${x}) = ${String(value)}::text`)
  return definite(sql`${x} = ${value}::text`)
}

/**
 * gt/lt: numerically for a number, and for a number given as text where the field holds one (as text, "9" > "10");
 * else as text in byte order (ISO dates `YYYY-MM-DD` sort right).
 */
function compare(x: SQL, cmp: '>' | '<', value: string | number): SQL {
  const op = sql.raw(cmp)
  if (typeof value === 'number') return definite(sql`${asNumber(x)} ${op} ${value}::numeric`)
  const asText = sql`${x} <> '' AND ${x} COLLATE "C" ${op} (${value}::text COLLATE "C")`
  if (!NUMERIC_VALUE.test(value)) return definite(asText)
  return definite(
    sql`(CASE WHEN ${x} ~ ${sql.raw(NUMERIC_TEXT)} THEN ${asNumber(x)} ${op} ${value.trim()}::numeric ELSE ${asText} END)`,
  )
}

function fieldSql(cond: FieldCondition): SQL {
  const x = fieldText(cond.field)
  // Countries are stored as upper-cased codes (`cz` and `Česko` come in as `CZ`): a condition names them any of
  // these ways. A value that is no country's name (a part of a code for `contains`) is only upper-cased.
  const v =
    cond.field === 'country' && typeof cond.value === 'string'
      ? (countryCode(cond.value) ?? cond.value.trim().toUpperCase())
      : cond.value
  switch (cond.op) {
    case 'exists': {
      const present = definite(sql`${x} <> ''`)
      return v === false ? sql`(NOT ${present})` : present
    }
    case 'eq':
      return equals(x, v ?? '')
    case 'neq':
      return sql`(NOT ${equals(x, v ?? '')})`
    case 'contains':
      return definite(sql`strpos(lower(${x}), lower(${String(v ?? '')}::text)) > 0`)
    case 'gt':
    case 'lt':
      return compare(x, cond.op === 'gt' ? '>' : '<', typeof v === 'number' ? v : String(v ?? ''))
  }
}

function mailReached(
  column: 'first_open_at' | 'first_click_at',
  nodeId: string,
  o: ConditionSqlOptions,
): SQL {
  const pipeline = o.pipelineId === undefined ? sql`` : sql` AND cm.pipeline_id = ${o.pipelineId}::int`
  return sql`EXISTS (SELECT 1 FROM messages cm
      WHERE cm.account_id = ${o.accountId}::int AND cm.email = c.email AND cm.action_id = ${nodeId}::text
        AND cm.${sql.identifier(column)} IS NOT NULL${pipeline})`
}

export function conditionSql(cond: Condition, o: ConditionSqlOptions): SQL {
  if ('all' in cond)
    return sql`(${sql.join(
      cond.all.map((c) => conditionSql(c, o)),
      sql` AND `,
    )})`
  if ('any' in cond)
    return sql`(${sql.join(
      cond.any.map((c) => conditionSql(c, o)),
      sql` OR `,
    )})`
  if ('not' in cond) return sql`(NOT ${conditionSql(cond.not, o)})`
  if ('field' in cond) return fieldSql(cond)
  if ('tag' in cond) return sql`(c.tags @> ARRAY[${cond.tag}::text])`
  if ('opened' in cond) return mailReached('first_open_at', cond.opened, o)
  if ('clicked' in cond) return mailReached('first_click_at', cond.clicked, o)
  if ('purchased' in cond) {
    const since = new Date(o.now.getTime() - cond.purchased.days * DAY_MS)
    return sql`EXISTS (SELECT 1 FROM transactions cp
        WHERE cp.account_id = ${o.accountId}::int AND cp.email = c.email
          AND cp.occurred_at >= ${since.toISOString()}::timestamptz
          AND cp.occurred_at <= ${o.now.toISOString()}::timestamptz)`
  }
  if ('in_list' in cond) {
    return sql`EXISTS (SELECT 1 FROM memberships cl
        WHERE cl.account_id = ${o.accountId}::int AND cl.contact_id = c.id
          AND cl.list_id = ${cond.in_list}::int AND cl.status = 1)`
  }
  if ('event' in cond) {
    // Tracker events (POST /tracker/events) of this contact; `tracker_events_contact_idx` answers it.
    const action = cond.event.action === undefined ? sql`` : sql` AND ce.action = ${cond.event.action}::text`
    return sql`EXISTS (SELECT 1 FROM tracker_events ce
        WHERE ce.contact_id = c.id AND ce.account_id = ${o.accountId}::int
          AND ce.category = ${cond.event.category}::text${action})`
  }
  const never: never = cond
  throw new Error(`unknown condition ${JSON.stringify(never)}`)
}

/**
 * The contact ids of the list's status-1 members that match `cond` now: a full SELECT of one `contact_id`
 * column, for `... WHERE contact_id IN (<this>)` or a UNION of several segments.
 */
export function segmentMembersSql(accountId: number, listId: number, cond: Condition, now: Date): SQL {
  return sql`SELECT m.contact_id FROM memberships m JOIN contacts c ON c.id = m.contact_id
      WHERE m.account_id = ${accountId}::int AND m.list_id = ${listId}::int AND m.status = 1
        AND ${conditionSql(cond, { accountId, now })}`
}
