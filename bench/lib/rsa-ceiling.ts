import { execFileSync } from 'node:child_process'
import os from 'node:os'

/**
 * The machine's RSA-2048 signing ceiling: cores × `openssl speed rsa2048` signs/s. A DKIM-signed message costs
 * at least one such signature, so this is the most signed mail the machine could send if it did nothing else;
 * send rates are reported as a share of it, measured in the same run, because machines differ and drift.
 */
export interface RsaCeiling {
  signsPerSecPerCore: number
  cores: number
  signsPerSec: number
}

export function measureRsaCeiling(seconds = 3): RsaCeiling | undefined {
  try {
    const out = execFileSync('openssl', ['speed', '-seconds', String(seconds), 'rsa2048'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    // The summary line: "rsa 2048 bits 0.000297s 0.000009s   3370.1 111111.1" (sign/s is the third number).
    const line = out.split('\n').find((l) => /^rsa\s+2048 bits/.test(l.trim()))
    const signs = Number(line?.trim().split(/\s+/)[5])
    if (!Number.isFinite(signs) || signs <= 0) return undefined
    const cores = os.cpus().length
    return { signsPerSecPerCore: Math.round(signs), cores, signsPerSec: Math.round(signs * cores) }
  } catch {
    return undefined
  }
}

/** The ceiling just before and just after a send, and their mean, against which the send's rate is shared. */
export interface BracketedCeiling extends RsaCeiling {
  before: number
  after: number
}

/**
 * Runs a send between two measurements of the ceiling. This machine kind's signing speed drifts by a fifth
 * within minutes (2,132-2,675 signs/s in one afternoon, measured), so one reading before a send that runs for
 * minutes made its share swing as much as the send itself; the mean of the two readings around it is the
 * ceiling of the time it ran.
 */
export async function bracketed<T>(
  send: () => Promise<T>,
): Promise<{ value: T; ceiling: BracketedCeiling | undefined }> {
  const before = measureRsaCeiling()
  const value = await send()
  const after = measureRsaCeiling()
  if (!before || !after) return { value, ceiling: undefined }
  const perCore = Math.round((before.signsPerSecPerCore + after.signsPerSecPerCore) / 2)
  return {
    value,
    ceiling: {
      signsPerSecPerCore: perCore,
      cores: before.cores,
      signsPerSec: perCore * before.cores,
      before: before.signsPerSec,
      after: after.signsPerSec,
    },
  }
}

/** A rate as a share of the ceiling, e.g. "26.4 %". */
export function shareOf(ceiling: RsaCeiling | undefined, msgPerSec: number): string | undefined {
  return ceiling ? `${((100 * msgPerSec) / ceiling.signsPerSec).toFixed(1)} %` : undefined
}
