import type { Executor } from '../../core/db/client.js'
import { modelCache, type ModelRef } from './recommendation-cache.js'
import { boughtBy } from './recommendations.repo.js'

export type { ModelRef } from './recommendation-cache.js'

export interface RecommendedRow {
  id: string
  title: string
  url: string
  image: string
  price: string | null
  score: number
}

/** Candidates per person looked up in the feed beyond `limit`. */
const SPARE = 10

interface Candidate {
  id: string
  score: number
}

/** Higher score first; ties by product id in code-unit order, whatever the database's collation. */
const byRank = (a: Candidate, b: Candidate) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Each person's top `limit` products, for any number of people (the API asks for one, a mail batch for
 * hundreds). A person with purchases in the shop gets the products bought with theirs: a product's score is
 * the sum of its pair scores with each distinct product they bought. One without gets the bestsellers. Never
 * a product they bought, a filtered product, a product in a filtered category (any segment of its feed
 * category path) or a product not in the feed. The first `limit + SPARE` candidates are looked up in the feed
 * (the model holds only feed products, so the spare ones cover products that left it since it was trained).
 *
 * One statement reads what the people bought; the model's partner lists, bestsellers and the feed's products
 * come from the model's cache, read from the database only the first time (recommendation-cache.ts).
 * `emails` as stored (trimmed, lower-cased); a person with nothing to offer maps to an empty list.
 */
export async function recommend(
  db: Executor,
  model: ModelRef,
  emails: readonly string[],
  limit: number,
): Promise<Map<string, RecommendedRow[]>> {
  const people = [...new Set(emails)]
  const cache = await modelCache(db, model)
  const bought = new Map<string, Set<string>>()
  for (const row of await boughtBy(db, model.account_id, model.shop_id, people)) {
    const own = bought.get(row.email) ?? new Set<string>()
    own.add(row.code)
    bought.set(row.email, own)
  }
  const partners = await cache.partnersOf(db, new Set([...bought.values()].flatMap((s) => [...s])))
  const spare = limit + SPARE
  const strangers = cache.bestsellers.slice(0, spare).map((b) => ({ id: b.product_id, score: b.score }))
  strangers.sort(byRank)

  const firstOf = new Map<string, Candidate[]>()
  for (const email of people) {
    const own = bought.get(email)
    if (!own) {
      firstOf.set(email, strangers)
      continue
    }
    const scores = new Map<string, number>()
    for (const code of own) {
      const list = partners.get(code)!
      for (let i = 0; i < list.ids.length; i++) {
        const other = list.ids[i]!
        if (own.has(other) || cache.excluded.has(other)) continue
        scores.set(other, (scores.get(other) ?? 0) + list.scores[i]!)
      }
    }
    const ranked = Array.from(scores, ([id, score]) => ({ id, score })).sort(byRank)
    firstOf.set(email, ranked.slice(0, spare))
  }

  const products = await cache.productsOf(
    db,
    new Set([...firstOf.values()].flatMap((c) => c.map((x) => x.id))),
  )
  const result = new Map<string, RecommendedRow[]>()
  for (const [email, first] of firstOf) {
    const offered: RecommendedRow[] = []
    for (const c of first) {
      const p = products.get(c.id)
      if (!p) continue
      offered.push({
        id: p.product_id,
        title: p.title,
        url: p.url,
        image: p.image,
        price: p.price,
        score: c.score,
      })
      if (offered.length === limit) break
    }
    result.set(email, offered)
  }
  return result
}
