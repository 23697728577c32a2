import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { FieldErrorBag, fieldError, notFound } from '../../core/http/errors.js'
import { dayAfter, parseDay, sqlDateTime } from '../../core/http/formats.js'
import { emitSignal } from '../signals/index.js'
import { deleteShopOf, parseTimestamp, toPurchase, type PurchaseValues } from './transactions.input.js'
import * as repo from './transactions.repo.js'
import {
  DEFAULT_TRANSACTIONS_PAGE,
  type DeleteBulkBodyT,
  type DeleteOneBodyT,
  type ListQueryT,
  type PageQueryT,
  type TransactionBodyT,
  type TransactionBulkBodyT,
  type TransactionT,
  type TransactionUpdateBodyT,
} from './transactions.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** Numeric text from PostgreSQL as a JSON number: its shortest double is the same decimal (≤ 15 digits). */
const num = (v: string) => Number(v)

export function toTransaction(row: repo.TransactionRow, items: repo.ItemRow[]): TransactionT {
  return {
    id: row.id,
    order_id: row.order_id,
    email: row.email,
    shop: row.shop,
    amount: num(row.amount),
    tax: num(row.tax),
    shipping: num(row.shipping),
    city: row.city,
    county: row.county,
    country: row.country,
    timestamp: sqlDateTime(new Date(row.occurred_at)),
    props: row.props ?? null,
    status: row.status,
    items: items.map((i) => ({
      order_id: row.order_id,
      code: i.code,
      title: i.title,
      category: i.category,
      price: num(i.price),
      amount: num(i.amount),
      categories: i.categories,
    })),
  }
}

/** Rows with their lines attached, in the rows' order. */
/** The api.md envelope of a page of purchases, each with its items. */
async function pageOfPurchases(
  ctx: Ctx,
  page: ReturnType<typeof toPage>,
  rows: repo.TransactionRow[],
  total: number,
) {
  return {
    transactions: await withItems(ctx, rows),
    current_page: page.page,
    per_page: page.perPage,
    total,
    last_page: lastPage(total, page.perPage),
  }
}

async function withItems(ctx: Ctx, rows: repo.TransactionRow[]): Promise<TransactionT[]> {
  const items = await repo.itemsOf(
    ctx.db,
    rows.map((r) => r.id),
  )
  const byId = new Map<number, repo.ItemRow[]>()
  for (const i of items) {
    const list = byId.get(i.transaction_id) ?? []
    list.push(i)
    byId.set(i.transaction_id, list)
  }
  return rows.map((r) => toTransaction(r, byId.get(r.id) ?? []))
}

/** A `date_from`/`date_to` bound: a day (the whole day, so `to` is the next midnight) or a date-time. */
function dateBound(value: string | undefined, field: string, end: boolean): Date | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const day = parseDay(value.trim())
  if (day) return end ? dayAfter(day) : day
  const at = parseTimestamp(value, new Date(0))
  if (!at) throw fieldError(field, `The ${field} must be a date (YYYY-MM-DD) or a date-time.`)
  return end ? new Date(at.getTime() + 1000) : at
}

function purchaseOrThrow(
  body: {
    transaction: TransactionBodyT['transaction']
    transaction_items?: TransactionBodyT['transaction_items']
  },
  now: Date,
): PurchaseValues {
  const errors = new FieldErrorBag()
  const p = toPurchase(errors, '', body.transaction, body.transaction_items, now)
  errors.throwIfAny()
  return p!
}

export function createTransactionService(ctx: Ctx) {
  /** The one stored order `orderId` (in `shop` when given); 404 when none, 422 when the shop is ambiguous. */
  async function requireOrder(ex: Executor, accountId: number, orderId: string, shop: string | undefined) {
    const found = await repo.findOrders(ex, accountId, orderId, shop)
    if (found.length === 0) throw notFound('Transaction not found')
    if (found.length > 1)
      throw fieldError('transaction.shop', 'Several shops have this order id: the shop field is required.')
    return found[0]!
  }

  return {
    /**
     * `POST /tracker/transaction`: a new purchase, and its `purchase` signal for automations in the same
     * database transaction. The address need not be a subscriber (shops send every order).
     */
    async create(accountId: number, body: TransactionBodyT): Promise<TransactionT> {
      const now = ctx.clock.now()
      const p = purchaseOrThrow(body, now)
      const row = await retriedTransaction(ctx.db, async (tx) => {
        const stored = await repo.insertPurchase(tx, accountId, p, now)
        if (!stored) return undefined
        await emitSignal(tx, {
          accountId,
          kind: 'purchase',
          email: stored.email,
          at: now,
          payload: {
            transaction_id: stored.id,
            order_id: stored.order_id,
            shop: stored.shop,
            amount: num(stored.amount),
            timestamp: sqlDateTime(new Date(stored.occurred_at)),
          },
        })
        return stored
      })
      if (!row) throw fieldError('transaction.order_id', 'The order id has already been taken.')
      return (await withItems(ctx, [row]))[0]!
    },

    /**
     * `PUT /tracker/transaction/{order_id}`: overwrites an existing order and all its lines. Emits no
     * signal: the purchase was signalled when it was created.
     */
    async update(accountId: number, orderId: string, body: TransactionUpdateBodyT): Promise<TransactionT> {
      const id = orderId.trim()
      const given = body.transaction.order_id?.trim()
      if (given !== undefined && given !== '' && given !== id)
        throw fieldError('transaction.order_id', 'The order id must match the order id in the path.')
      const shop = body.transaction.shop === undefined ? undefined : body.transaction.shop.trim()
      const p = purchaseOrThrow(
        { ...body, transaction: { ...body.transaction, order_id: id } },
        ctx.clock.now(),
      )
      const row = await retriedTransaction(ctx.db, async (tx) => {
        const order = await requireOrder(tx, accountId, id, shop)
        return repo.replacePurchase(tx, accountId, order.id, {
          ...p,
          transaction: { ...p.transaction, shop: order.shop },
        })
      })
      if (!row) throw notFound('Transaction not found')
      return (await withItems(ctx, [row]))[0]!
    },

    /** `GET /tracker/transaction`: the account's purchases, newest first, filtered and paged. */
    async list(accountId: number, query: ListQueryT) {
      const page = toPage(query.page, query.per_page, DEFAULT_TRANSACTIONS_PAGE)
      const filter: repo.TransactionFilter = {
        email:
          query.email === undefined || query.email.trim() === '' ? undefined : normalizeEmail(query.email),
        shop: query.shop === undefined || query.shop.trim() === '' ? undefined : query.shop.trim(),
        from: dateBound(query.date_from, 'date_from', false),
        to: dateBound(query.date_to, 'date_to', true),
      }
      const { rows, total } = await repo.transactionsPage(
        ctx.db,
        accountId,
        filter,
        page.perPage,
        page.offset,
      )
      const purchases = await pageOfPurchases(ctx, page, rows, total)
      const none = purchases.transactions.length === 0
      return {
        ...purchases,
        data: purchases.transactions,
        from: none ? null : page.offset + 1,
        to: none ? null : page.offset + purchases.transactions.length,
      }
    },

    /**
     * `GET /subscribers/{email}/transactions`: one person's purchases, newest first. An address the account
     * knows neither as a contact nor from a purchase answers 404, as `GET /subscribers/{email}` does.
     */
    async ofSubscriber(accountId: number, rawEmail: string, query: PageQueryT) {
      const email = normalizeEmail(rawEmail)
      const page = toPage(query.page, query.per_page, DEFAULT_TRANSACTIONS_PAGE)
      const { rows, total } = await repo.transactionsPage(
        ctx.db,
        accountId,
        { email },
        page.perPage,
        page.offset,
      )
      if (total === 0 && !(await repo.addressKnown(ctx.db, accountId, email)))
        throw notFound('Subscriber not found')
      return pageOfPurchases(ctx, page, rows, total)
    },

    /**
     * `POST /tracker/transaction-bulk`: up to 1000 purchases (the schema refuses more) in one statement;
     * orders the account already has are overwritten, and an order sent twice in one call counts once, the
     * later copy winning. An entry whose transaction is null is skipped. Any invalid purchase: 422 naming it,
     * nothing written. No purchase signals: an import of history must not start automations (contract §6).
     */
    async bulk(accountId: number, body: TransactionBulkBodyT): Promise<{ inserts: number }> {
      const now = ctx.clock.now()
      const errors = new FieldErrorBag()
      const byOrder = new Map<string, PurchaseValues>()
      body.transaction_data.forEach((entry, i) => {
        if (entry.transaction === null) return // no order (see BulkTransactionInput)
        const p = toPurchase(errors, `transaction_data.${i}`, entry.transaction, entry.transaction_items, now)
        if (!p) return
        const key = JSON.stringify([p.transaction.shop, p.transaction.orderId])
        byOrder.delete(key)
        byOrder.set(key, p)
      })
      errors.throwIfAny()
      const inserts = await retriedTransaction(ctx.db, async (tx) => {
        // An overwrite without a timestamp keeps the stored purchase time, as PUT does. Looked up only for
        // those (a history sync sends every order's time), so the import itself stays one statement.
        const untimed = [...byOrder.entries()].filter(([, p]) => !p.transaction.timeGiven)
        const stored = await repo.storedTimes(
          tx,
          accountId,
          untimed.map(([, p]) => ({ shop: p.transaction.shop, orderId: p.transaction.orderId })),
        )
        for (const [key, p] of untimed) {
          const at = stored.get(key)
          if (at) p.transaction.occurredAt = at
        }
        return repo.upsertPurchases(tx, accountId, [...byOrder.values()], now)
      })
      return { inserts }
    },

    /** `DELETE /tracker/transaction/delete-bulk`: orders by id (and shop, when given); how many went. */
    async deleteBulk(accountId: number, body: DeleteBulkBodyT): Promise<{ deleted: number }> {
      const refs = body.transaction_data.map((r) => {
        const shop = r.shop === undefined || r.shop === null ? null : r.shop.trim()
        return { orderId: r.order_id.trim(), shop }
      })
      return { deleted: await repo.deleteOrders(ctx.db, accountId, refs) }
    },

    /**
     * `DELETE /tracker/transaction/{order_id}/delete`: with `transaction_data.shop` only that shop's order,
     * else the order id in every shop. `{deleted:false}` when nothing matched.
     */
    async deleteOne(accountId: number, orderId: string, body: DeleteOneBodyT) {
      const shop = deleteShopOf(body)
      const s = shop === undefined || shop === null ? undefined : shop.trim()
      const n = await repo.deleteOrder(ctx.db, accountId, orderId.trim(), s)
      return { deleted: n > 0 }
    },
  }
}
