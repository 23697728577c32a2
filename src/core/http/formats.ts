/** The two time formats of api.md, always in UTC, and the parsers of the dates clients send. */
import { DAY_MS } from '../clock.js'

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** `YYYY-MM-DD HH:MM:SS` */
export function sqlDateTime(d: Date): string
export function sqlDateTime(d: Date | null | undefined): string | null
export function sqlDateTime(d: Date | null | undefined): string | null {
  if (!d) return null
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  )
}

/** ISO 8601 UTC with microseconds: `2026-01-02T03:04:05.000000Z` */
export function isoMicro(d: Date): string
export function isoMicro(d: Date | null | undefined): string | null
export function isoMicro(d: Date | null | undefined): string | null {
  if (!d) return null
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/

/** A real calendar instant from `YYYY-MM-DD HH:MM:SS` (UTC), or null (2026-02-30 is no date). */
export function parseSqlDateTime(value: string): Date | null {
  const m = DATE_TIME.exec(value)
  if (!m) return null
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s))
  const same =
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s
  return same ? date : null
}

/** The last millisecond of 9999: years past it JavaScript writes as `+010000`, which PostgreSQL does not read. */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * The midnight after `day`: the exclusive end of a range that takes in the whole day. After 9999-12-31, that
 * day's last millisecond (a range "up to 9999-12-31" answered 500 when the bound reached the database).
 */
export function dayAfter(day: Date): Date {
  return new Date(Math.min(day.getTime() + DAY_MS, LAST_MS))
}

/** Midnight UTC of a `YYYY-MM-DD` day, or null when it is no calendar day. */
export function parseDay(value: string): Date | null {
  return DAY.test(value) ? parseSqlDateTime(`${value} 00:00:00`) : null
}
