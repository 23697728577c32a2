import type pg from 'pg'
/** pg_stat_activity samples during the traffic: what the server sessions wait on, and the longest waits. */
export const activity = {
  samples: 0,
  maxActive: 0,
  maxWaitingOnLocks: 0,
  waits: new Map<string, number>(),
  longest: [] as { secs: number; wait: string; query: string }[],
  /** Sessions that block others while not waiting on a lock themselves (heads of lock queues). */
  heads: new Map<string, { n: number; maxXactSecs: number; blocked: number }>(),
}
export async function sampleActivity(client: pg.Client) {
  try {
    const { rows } = await client.query(
      `SELECT state, coalesce(wait_event_type || ':' || wait_event, '-') AS wait,
              extract(epoch FROM now() - query_start)::float AS secs, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    )
    activity.samples++
    const active = rows.filter((r) => r.state !== 'idle')
    activity.maxActive = Math.max(activity.maxActive, active.length)
    activity.maxWaitingOnLocks = Math.max(
      activity.maxWaitingOnLocks,
      active.filter((r) => r.wait.startsWith('Lock')).length,
    )
    for (const r of active) {
      const k = `${r.state} ${r.wait}`
      activity.waits.set(k, (activity.waits.get(k) ?? 0) + 1)
      if (r.secs > 5)
        activity.longest.push({ secs: Math.round(r.secs), wait: `${r.state} ${r.wait}`, query: r.query })
    }
    const heads = await client.query(
      `WITH w AS (SELECT pid, pg_blocking_pids(pid) AS by FROM pg_stat_activity
                  WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0),
            h AS (SELECT b AS pid, count(*)::int AS blocked FROM w, unnest(w.by) b
                  WHERE b NOT IN (SELECT pid FROM w) GROUP BY b)
       SELECT a.state, coalesce(a.wait_event_type || ':' || a.wait_event, '-') AS wait, h.blocked,
              extract(epoch FROM now() - a.xact_start)::float AS xact_secs,
              left(regexp_replace(a.query, '\\s+', ' ', 'g'), 100) AS query
       FROM h JOIN pg_stat_activity a ON a.pid = h.pid`,
    )
    for (const r of heads.rows) {
      const k = `${r.state} ${r.wait} | last query: ${r.query}`
      const e = activity.heads.get(k) ?? { n: 0, maxXactSecs: 0, blocked: 0 }
      e.n++
      e.maxXactSecs = Math.max(e.maxXactSecs, Math.round(r.xact_secs))
      e.blocked = Math.max(e.blocked, r.blocked)
      activity.heads.set(k, e)
    }
    activity.longest.sort((a, b) => b.secs - a.secs)
    activity.longest.splice(20)
  } catch {
    /* sampling is best effort */
  }
}
