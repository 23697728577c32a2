import type { Executor } from '../../core/db/client.js'
import { feedProductsByIds, type FeedProductRow } from '../feeds/index.js'
import { bestsellersOf, partnersOf, productsInCategories } from './recommendations.repo.js'
import type { RecommenderSettings } from './recommenders.table.js'

/** What recommending needs of a recommender; `model_key` changes when its model, feed or settings do. */
export interface ModelRef {
  id: number
  account_id: number
  shop_id: string
  feed_id: number
  settings: RecommenderSettings
  model_key: string
}

/** What a recommendation shows of a feed product (its categories are not kept: the exclusions hold them). */
export type ShownProduct = Omit<FeedProductRow, 'categories'>

/** A product's partners in the model, best first. */
export interface Partners {
  ids: string[]
  scores: number[]
}

/**
 * Bounds of one model's cache: 600,000 partner entries hold every list of a 12,000-product shop (50 each), about
 * 16 bytes an entry since product ids are interned (one string per product, however many lists name it), so some
 * 10 MB; a larger catalogue keeps its most recently read lists. Past a bound the oldest entries go first. A
 * bound of 150,000 made the recommendations bench's 10,000-product shop read half its lists again and again.
 */
const MAX_PARTNER_ENTRIES = 600_000
const MAX_PRODUCTS = 20_000
/** Models kept per database: a campaign's mail names one or two. */
const MAX_MODELS = 4

/**
 * The parts of one recommender's recommendations that change only with a retraining, a feed refresh or new
 * settings, read from the database once and kept for every mail batch and request after: the excluded
 * products, the bestsellers, each product's partners and the feed's products. What people bought is never
 * kept (recommend.ts reads it every time). Why: the campaign's batches read the same few thousand lists
 * again and again; as one statement per batch, ranking 75,000 pair rows, PostgreSQL spent four times the
 * plain campaign's time per message on them (docs/benchmarks-history.md, Recommenders).
 */
export class ModelCache {
  private readonly partners = new Map<string, Partners>()
  private partnerEntries = 0
  /** One string per product id for all the partner lists (a driver's rows each bring their own copy). */
  private readonly interned = new Map<string, string>()
  private readonly products = new Map<string, ShownProduct | null>()

  private constructor(
    readonly key: string,
    readonly model: ModelRef,
    /** Filtered products and the feed's products in filtered categories. */
    readonly excluded: ReadonlySet<string>,
    /** Best first, without the excluded ones. */
    readonly bestsellers: readonly { product_id: string; score: number }[],
  ) {}

  static async load(ex: Executor, model: ModelRef): Promise<ModelCache> {
    const inCategories = await productsInCategories(
      ex,
      model.feed_id,
      model.settings.filtered_categories ?? [],
    )
    const excluded = new Set([...(model.settings.filtered_products ?? []), ...inCategories])
    const best = (await bestsellersOf(ex, model.id)).filter((b) => !excluded.has(b.product_id))
    return new ModelCache(model.model_key, model, excluded, best)
  }

  /** The partners of each of these products (a product without any maps to an empty list). */
  async partnersOf(ex: Executor, codes: Iterable<string>): Promise<Map<string, Partners>> {
    const found = new Map<string, Partners>()
    const missing: string[] = []
    for (const code of codes) {
      const known = this.partners.get(code)
      if (known) found.set(code, known)
      else missing.push(code)
    }
    if (missing.length === 0) return found
    for (const code of missing) found.set(code, { ids: [], scores: [] })
    for (const row of await partnersOf(ex, this.model.id, missing)) {
      const list = found.get(row.product_id)!
      let id = this.interned.get(row.other_id)
      if (id === undefined) this.interned.set(row.other_id, (id = row.other_id))
      list.ids.push(id)
      list.scores.push(Number(row.score))
    }
    for (const code of missing) {
      const list = found.get(code)!
      this.partners.set(code, list)
      this.partnerEntries += list.ids.length + 1
    }
    for (const [code, list] of this.partners) {
      if (this.partnerEntries <= MAX_PARTNER_ENTRIES) break
      this.partners.delete(code)
      this.partnerEntries -= list.ids.length + 1
    }
    return found
  }

  /** The feed's row of each of these products, or null for one the feed does not hold. */
  async productsOf(ex: Executor, ids: Iterable<string>): Promise<Map<string, ShownProduct | null>> {
    const found = new Map<string, ShownProduct | null>()
    const missing: string[] = []
    for (const id of ids) {
      const known = this.products.get(id)
      if (known !== undefined) found.set(id, known)
      else if (!found.has(id)) missing.push(id)
    }
    if (missing.length === 0) return found
    for (const id of missing) found.set(id, null)
    for (const { categories: _kept, ...shown } of await feedProductsByIds(ex, this.model.feed_id, missing))
      found.set(shown.product_id, shown)
    for (const id of missing) this.products.set(id, found.get(id)!)
    for (const id of this.products.keys()) {
      if (this.products.size <= MAX_PRODUCTS) break
      this.products.delete(id)
    }
    return found
  }
}

/** Per database handle, so two apps in one process (the tests) never share a model's parts. */
const cachesByDb = new WeakMap<object, Map<number, ModelCache>>()

/**
 * Loads under way, per database handle and model key: requests that arrive while a model is being read (a
 * campaign's first batches, a burst of API calls after a retraining) wait for that one read instead of each
 * reading the model and keeping its own copy.
 */
const loadingByDb = new WeakMap<object, Map<string, Promise<ModelCache>>>()

/** The model's cache, loaded (or reloaded, when its key changed) on first use. */
export async function modelCache(db: Executor, model: ModelRef): Promise<ModelCache> {
  let byModel = cachesByDb.get(db)
  if (!byModel) cachesByDb.set(db, (byModel = new Map()))
  const cached = byModel.get(model.id)
  if (cached?.key === model.model_key) return cached
  let loading = loadingByDb.get(db)
  if (!loading) loadingByDb.set(db, (loading = new Map()))
  const key = `${model.id}|${model.model_key}`
  let load = loading.get(key)
  if (!load) {
    const models = byModel
    const inFlight = loading
    load = ModelCache.load(db, model).then(
      (loaded) => {
        inFlight.delete(key)
        models.delete(model.id)
        models.set(model.id, loaded)
        for (const id of models.keys()) {
          if (models.size <= MAX_MODELS) break
          models.delete(id)
        }
        return loaded
      },
      (err: unknown) => {
        // A failed read is not remembered: the next request tries again.
        inFlight.delete(key)
        throw err
      },
    )
    loading.set(key, load)
  }
  return load
}
