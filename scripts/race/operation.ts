import { EMAILS, pools } from './pools.js'
import { pick } from './random.js'

/** One kind of call of the traffic mix: [kind, weight, action]. */
export type Op = [string, number, () => Promise<unknown>]

/** Random picks from the shared pools, for the call tables. */
export const L = () => pick(pools.lists) ?? 1
export const E = () => pick(EMAILS)
export const C = () => pick(pools.campaigns) ?? 1
export const P = () => pick(pools.pipelines) ?? 1
export const T = () => pick(pools.templates) ?? 1
export const enc = encodeURIComponent
