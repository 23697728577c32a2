/** The two time formats of api.md, always in UTC. */

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
