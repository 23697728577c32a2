import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { ItemValues, PurchaseValues, TransactionValues } from './transactions.input.js'

/** A stored purchase as read back; money comes as numeric text (exact) and is made a number on the wire. */
export interface TransactionRow {
  id: number
  order_id: string
  email: string
  shop: string
  amount: string
  tax: string
  shipping: string
  city: string
  county: string | null
  country: string
  status: string
  props: unknown
  occurred_at: Date | string
}

/** A stored line: the values it was written with, and its order. */
export type ItemRow = ItemValues & { transaction_id: number }

const COLUMNS = sql.raw(`t.id, t.order_id, t.email, t.shop, t.amount::text AS amount, t.tax::text AS tax,
  t.shipping::text AS shipping, t.city, t.county, t.country, t.status, t.props, t.occurred_at`)

/** The purchase's fields as one JSON document, so a statement takes them as a single parameter. */
function transactionJson(t: TransactionValues, k = 0) {
  return {
    k,
    order_id: t.orderId,
    email: t.email,
    shop: t.shop,
    amount: t.amount,
    tax: t.tax,
    shipping: t.shipping,
    city: t.city,
    county: t.county,
    country: t.country,
    status: t.status,
    props: t.props,
    occurred_at: t.occurredAt.toISOString(),
  }
}

const itemJson = (item: ItemValues, position: number) => ({ position, ...item })

const INPUT_COLUMNS = sql.raw(`k int, order_id text, email text, shop text, amount numeric, tax numeric,
  shipping numeric, city text, county text, country text, status text, props jsonb, occurred_at timestamptz`)
const ITEM_COLUMNS = sql.raw(`position int, code text, title text, category text, price numeric,
  amount numeric, categories text[]`)

/** Side effect: writes the lines of one stored purchase (none when `items` is empty). */
async function insertItems(
  ex: Executor,
  accountId: number,
  transactionId: number,
  shop: string,
  items: ItemValues[],
): Promise<void> {
  if (items.length === 0) return
  await ex.execute(sql`INSERT INTO transaction_items
      (account_id, transaction_id, shop, position, code, title, category, price, amount, categories)
    SELECT ${accountId}::int, ${transactionId}::int, ${shop}::text, l.position, l.code, l.title, l.category,
           l.price, l.amount, coalesce(l.categories, '{}')
    FROM jsonb_to_recordset(${JSON.stringify(items.map((it, i) => itemJson(it, i)))}::jsonb) AS l(${ITEM_COLUMNS})`)
}

/**
 * Side effect: stores a new purchase and its lines. Undefined (nothing written) when the account already
 * has this order id in this shop.
 */
export async function insertPurchase(
  ex: Executor,
  accountId: number,
  p: PurchaseValues,
  now: Date,
): Promise<TransactionRow | undefined> {
  const row = await queryOne<TransactionRow>(
    ex,
    sql`WITH input AS (SELECT * FROM jsonb_to_record(${JSON.stringify(transactionJson(p.transaction))}::jsonb)
          AS x(${INPUT_COLUMNS}))
        INSERT INTO transactions AS t (account_id, order_id, email, shop, amount, tax, shipping, city, county,
          country, status, props, occurred_at, created_at)
        SELECT ${accountId}::int, order_id, email, shop, amount, tax, shipping, city, county, country, status,
               nullif(props, 'null'::jsonb), occurred_at, ${now.toISOString()}::timestamptz
        FROM input
        ON CONFLICT (account_id, shop, order_id) DO NOTHING
        RETURNING ${COLUMNS}`,
  )
  if (row) await insertItems(ex, accountId, row.id, row.shop, p.items)
  return row
}

/**
 * Side effect: overwrites the stored purchase `id` and replaces its lines. Without a timestamp from the
 * sender the stored purchase time stays: a status update must not move an old order into today's
 * conversion windows.
 */
export async function replacePurchase(
  ex: Executor,
  accountId: number,
  id: number,
  p: PurchaseValues,
): Promise<TransactionRow | undefined> {
  const t = p.transaction
  const row = await queryOne<TransactionRow>(
    ex,
    sql`UPDATE transactions AS t SET email = ${t.email}, amount = ${t.amount}::numeric, tax = ${t.tax}::numeric,
          shipping = ${t.shipping}::numeric, city = ${t.city}, county = ${t.county}, country = ${t.country},
          status = ${t.status}, props = nullif(${JSON.stringify(t.props)}::jsonb, 'null'::jsonb),
          occurred_at = ${t.timeGiven ? sql`${t.occurredAt.toISOString()}::timestamptz` : sql`t.occurred_at`},
          revision = t.revision + 1
        WHERE t.id = ${id}::int AND t.account_id = ${accountId}::int
        RETURNING ${COLUMNS}`,
  )
  if (!row) return undefined
  await ex.execute(sql`DELETE FROM transaction_items WHERE transaction_id = ${id}::int`)
  await insertItems(ex, accountId, id, row.shop, p.items)
  return row
}

/**
 * Side effect: stores many purchases at once, overwriting orders the account already has (same shop and
 * order id) together with their lines, in three statements whatever their number: the orders, the removal of
 * overwritten orders' old lines, then every line. `purchases` must hold each (shop, order id) once.
 * Returns how many orders were written. The orders are written (and locked) in (shop, order id) order, as
 * deleteOrders locks them: two imports of the same orders in another order each took one and waited for the
 * other's, a deadlock, and under steady concurrent imports the retries ran out (a 500).
 */
export async function upsertPurchases(
  ex: Executor,
  accountId: number,
  purchases: PurchaseValues[],
  now: Date,
): Promise<number> {
  if (purchases.length === 0) return 0
  const orders = purchases.map((p, k) => transactionJson(p.transaction, k))
  const stored = await queryRows<{ k: number; id: number; shop: string; updated: boolean }>(
    ex,
    sql`WITH input AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(orders)}::jsonb) AS x(${INPUT_COLUMNS})),
        up AS (
          INSERT INTO transactions AS t (account_id, order_id, email, shop, amount, tax, shipping, city, county,
            country, status, props, occurred_at, created_at)
          SELECT ${accountId}::int, order_id, email, shop, amount, tax, shipping, city, county, country, status,
                 nullif(props, 'null'::jsonb), occurred_at, ${now.toISOString()}::timestamptz
          FROM input ORDER BY shop, order_id
          ON CONFLICT (account_id, shop, order_id) DO UPDATE SET email = excluded.email,
            amount = excluded.amount, tax = excluded.tax, shipping = excluded.shipping, city = excluded.city,
            county = excluded.county, country = excluded.country, status = excluded.status,
            props = excluded.props, occurred_at = excluded.occurred_at, revision = t.revision + 1
          RETURNING t.id, t.shop, t.order_id, (t.xmax <> 0) AS updated)
        SELECT i.k, up.id, up.shop, up.updated
        FROM up JOIN input i ON i.shop = up.shop AND i.order_id = up.order_id`,
  )
  // Only overwritten orders (xmax set by ON CONFLICT's update) have old lines: their ids as one array make the
  // removal an index lookup, never a scan of every line of the account. A statement of its own, not a part of
  // the upsert: an order another request wrote and committed while this one waited for its row has lines
  // that the upsert's snapshot, taken before, does not see, so they stayed and the new lines collided with
  // them (seen with concurrent bulk imports of the same orders on PostgreSQL); this statement's snapshot,
  // taken with the order's row locked by this transaction, sees them. The new lines go in by a third: within
  // one, the removal and the insert of the same (order, position) would collide.
  const overwritten = JSON.stringify(stored.filter((r) => r.updated).map((r) => r.id))
  if (overwritten !== '[]')
    await ex.execute(
      sql`DELETE FROM transaction_items
          WHERE transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(${overwritten}::jsonb)::int))`,
    )
  const byK = new Map(stored.map((r) => [Number(r.k), r]))
  const lines = purchases.flatMap((p, k) => {
    const order = byK.get(k)
    if (!order) return []
    return p.items.map((it, position) => ({ transaction_id: order.id, shop: order.shop, position, ...it }))
  })
  if (lines.length > 0) {
    await ex.execute(sql`INSERT INTO transaction_items
        (account_id, transaction_id, shop, position, code, title, category, price, amount, categories)
      SELECT ${accountId}::int, l.transaction_id, l.shop, l.position, l.code, l.title, l.category, l.price,
             l.amount, coalesce(l.categories, '{}')
      FROM jsonb_to_recordset(${JSON.stringify(lines)}::jsonb) AS l(transaction_id int, shop text, position int,
        code text, title text, category text, price numeric, amount numeric, categories text[])`)
  }
  return stored.length
}

/** The stored purchase times of these orders (those the account has), keyed by `JSON.stringify([shop, order id])`. */
export async function storedTimes(
  ex: Executor,
  accountId: number,
  orders: { shop: string; orderId: string }[],
): Promise<Map<string, Date>> {
  if (orders.length === 0) return new Map()
  const input = JSON.stringify(orders.map((o) => ({ shop: o.shop, order_id: o.orderId })))
  const rows = await queryRows<{ shop: string; order_id: string; occurred_at: Date | string }>(
    ex,
    sql`SELECT t.shop, t.order_id, t.occurred_at
        FROM jsonb_to_recordset(${input}::jsonb) AS i(shop text, order_id text)
        JOIN transactions t ON t.account_id = ${accountId}::int AND t.shop = i.shop AND t.order_id = i.order_id`,
  )
  return new Map(rows.map((r) => [JSON.stringify([r.shop, r.order_id]), new Date(r.occurred_at)]))
}

/** The account's stored orders with this order id: in `shop` only when given, else in every shop. */
export async function findOrders(
  ex: Executor,
  accountId: number,
  orderId: string,
  shop: string | undefined,
): Promise<{ id: number; shop: string }[]> {
  return queryRows(
    ex,
    sql`SELECT id, shop FROM transactions
        WHERE account_id = ${accountId}::int AND order_id = ${orderId}
          ${shop === undefined ? sql`` : sql`AND shop = ${shop}`}
        ORDER BY id`,
  )
}

/** Side effect: deletes the order (in `shop` when given, else in every shop); how many were deleted. */
export async function deleteOrder(
  ex: Executor,
  accountId: number,
  orderId: string,
  shop: string | undefined,
): Promise<number> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`DELETE FROM transactions WHERE account_id = ${accountId}::int AND order_id = ${orderId}
          ${shop === undefined ? sql`` : sql`AND shop = ${shop}`}
        RETURNING id`,
  )
  return rows.length
}

/**
 * Side effect: deletes many orders by (order id, shop?) in one statement; how many were deleted. Locked first in
 * (shop, order id) order, as upsertPurchases writes them, so that the two never wait for each other in a cycle.
 */
export async function deleteOrders(
  ex: Executor,
  accountId: number,
  refs: { orderId: string; shop: string | null }[],
): Promise<number> {
  if (refs.length === 0) return 0
  const json = JSON.stringify(refs.map((r) => ({ order_id: r.orderId, shop: r.shop })))
  const row = await queryOne<{ n: number }>(
    ex,
    sql`WITH doomed AS (
          SELECT t.id FROM transactions t
          JOIN jsonb_to_recordset(${json}::jsonb) AS r(order_id text, shop text)
            ON t.order_id = r.order_id AND (r.shop IS NULL OR t.shop = r.shop)
          WHERE t.account_id = ${accountId}::int
          ORDER BY t.shop, t.order_id
          FOR UPDATE OF t),
        gone AS (DELETE FROM transactions t USING doomed WHERE t.id = doomed.id RETURNING t.id)
        SELECT count(DISTINCT id)::int AS n FROM gone`,
  )
  return Number(row?.n ?? 0)
}

export interface TransactionFilter {
  email?: string | undefined
  shop?: string | undefined
  from?: Date | undefined
  /** Exclusive. */
  to?: Date | undefined
}

function whereOf(accountId: number, f: TransactionFilter): SQL {
  return sql`t.account_id = ${accountId}::int
    ${f.email === undefined ? sql`` : sql`AND t.email = ${f.email}`}
    ${f.shop === undefined ? sql`` : sql`AND t.shop = ${f.shop}`}
    ${f.from === undefined ? sql`` : sql`AND t.occurred_at >= ${f.from.toISOString()}::timestamptz`}
    ${f.to === undefined ? sql`` : sql`AND t.occurred_at < ${f.to.toISOString()}::timestamptz`}`
}

/** One page of the account's purchases, newest first, and how many match. */
export async function transactionsPage(
  ex: Executor,
  accountId: number,
  filter: TransactionFilter,
  limit: number,
  offset: number,
): Promise<{ rows: TransactionRow[]; total: number }> {
  const where = whereOf(accountId, filter)
  const rows = await queryRows<TransactionRow>(
    ex,
    sql`SELECT ${COLUMNS} FROM transactions t WHERE ${where}
        ORDER BY t.occurred_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}`,
  )
  const total = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM transactions t WHERE ${where}`,
  )
  return { rows, total: Number(total?.n ?? 0) }
}

/** The lines of the given purchases, in their order within each purchase. */
export async function itemsOf(ex: Executor, transactionIds: number[]): Promise<ItemRow[]> {
  if (transactionIds.length === 0) return []
  return queryRows<ItemRow>(
    ex,
    sql`SELECT transaction_id, code, title, category, price::text AS price, amount::text AS amount, categories
        FROM transaction_items
        WHERE transaction_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(transactionIds)}::jsonb)::int)
        ORDER BY transaction_id, position`,
  )
}

/** Whether the account knows the address at all: as a contact, or in a purchase. */
export async function addressKnown(ex: Executor, accountId: number, email: string): Promise<boolean> {
  const row = await queryOne<{ known: boolean }>(
    ex,
    sql`SELECT EXISTS (SELECT 1 FROM contacts WHERE account_id = ${accountId}::int AND email = ${email})
            OR EXISTS (SELECT 1 FROM transactions WHERE account_id = ${accountId}::int AND email = ${email})
          AS known`,
  )
  return row?.known === true
}

/**
 * Side effect: replaces the address on the account's purchases (GDPR erasure). The orders stay, so shop
 * figures and campaign conversions (whose messages carry the same stand-in) still add up.
 */
export async function pseudonymisePurchases(
  ex: Executor,
  accountId: number,
  email: string,
  pseudonym: string,
) {
  await ex.execute(
    sql`UPDATE transactions SET email = ${pseudonym}, city = '', county = NULL
        WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
}
