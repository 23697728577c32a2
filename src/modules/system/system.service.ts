import type { AppContext } from '../../core/context.js'
import { pingDatabase } from './system.repo.js'

export interface Health {
  status: 'ok' | 'unavailable'
  database: string
}

/** What GET /health reports: whether the database answers, and which kind it is. */
export function createHealthService(ctx: AppContext): { check: () => Promise<Health> } {
  return {
    async check() {
      try {
        await pingDatabase(ctx.db)
        return { status: 'ok', database: ctx.dbHandle.kind }
      } catch {
        return { status: 'unavailable', database: ctx.dbHandle.kind }
      }
    },
  }
}
