import { SEED } from './random.js'

// What the calls share: small pools of addresses and ids, so that they collide.
export const USERS = Array.from({ length: 40 }, (_, i) => `u${i}@example.cz`)
export const GONE = Array.from({ length: 4 }, (_, i) => `gone${i}@example.cz`)
export const EMAILS = [...USERS, ...GONE]
export const BULK_EXTRA = Array.from({ length: 250 }, (_, i) => `b${i}@example.cz`)
export const TAGS = ['vip', 'new', 'engaged', 'x', 'promo']
export const CITIES = ['Praha', 'Brno', 'Ostrava', 'Plzen']
export const SHOPS = ['shopA', 'shopB']
export const ORDERS = Array.from({ length: 30 }, (_, i) => `o${i}`)
export const THROWAWAY_DOMAINS = ['tmp1.example', 'tmp2.example', 'tmp3.example']
export const COUPON_CODES = Array.from({ length: 60 }, (_, i) => `CODE${i}`)
export const IDEMPOTENCY_KEYS = Array.from({ length: 6 }, (_, i) => `race-idem-${SEED}-${i}`)

// Id pools (mutated by the loops).
export const pools = {
  lists: [] as number[],
  templates: [] as number[],
  campaigns: [] as number[],
  pipelines: [] as number[],
  folders: [] as number[],
  segments: [] as { id: string; list: number }[],
}
export const POOL_MAX = { campaigns: 10, pipelines: 6, folders: 4, segments: 8 }
