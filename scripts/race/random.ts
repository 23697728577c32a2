// Small seeded PRNG (mulberry32) so that a run can be repeated with RACE_SEED.
let seed = Number(process.env.RACE_SEED ?? Date.now() % 2 ** 31)
export const SEED = seed
export function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
export const ri = (n: number) => Math.floor(rand() * n)
export const pick = <T>(xs: readonly T[]): T => xs[ri(xs.length)]!
export const chance = (p: number) => rand() < p
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
