import { FieldErrorBag } from './errors.js'
import { dayAfter, parseDay } from './formats.js'

/** A statistics period: `from` inclusive, `to` exclusive (the midnight after the last day asked for). */
export interface StatsRange {
  from?: Date
  to?: Date
}

/** The same calendar day one year before `now` (UTC); 29 February falls back to 1 March. */
function oneYearBefore(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), now.getUTCDate()))
}

const day = (d: Date) => d.toISOString().slice(0, 10)

/**
 * `from_date`/`to_date` of the statistics routes (api.md, automation statistics; contract §5): `YYYY-MM-DD`
 * in UTC, both days inclusive; `from_date` not more than one year back, `to_date` after `from_date`. Anything
 * else is a 422 naming the field. Undefined when neither is given (an empty value counts as not given).
 */
export function parseStatsRange(
  query: { from_date?: string | undefined; to_date?: string | undefined },
  now: Date,
): StatsRange | undefined {
  const fromRaw = query.from_date?.trim() ?? ''
  const toRaw = query.to_date?.trim() ?? ''
  if (fromRaw === '' && toRaw === '') return undefined
  const bag = new FieldErrorBag()
  const from = fromRaw === '' ? null : parseDay(fromRaw)
  const to = toRaw === '' ? null : parseDay(toRaw)
  if (fromRaw !== '' && !from) bag.add('from_date', 'The from_date does not match the format Y-m-d.')
  if (toRaw !== '' && !to) bag.add('to_date', 'The to_date does not match the format Y-m-d.')
  const earliest = oneYearBefore(now)
  if (from && from < earliest)
    bag.add('from_date', `The from_date must be a date after or equal to ${day(earliest)}.`)
  if (from && to && to <= from) bag.add('to_date', 'The to_date must be a date after from_date.')
  bag.throwIfAny()
  return {
    ...(from ? { from } : {}),
    ...(to ? { to: dayAfter(to) } : {}),
  }
}

/** Only `from_date` (stats-detail): the same format and one-year rule, as a lower bound. */
export function parseFromDate(value: string | undefined, now: Date): Date | undefined {
  return parseStatsRange({ from_date: value }, now)?.from
}
