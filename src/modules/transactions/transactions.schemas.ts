import { Type, type Static } from '@sinclair/typebox'
import { MapOrEmpty, Nullable, OrNull, PageNumber, PerPage } from '../../core/http/schemas.js'

/**
 * Wire shapes of the tracker's transactions (api.md "Transaction", contract §9). Input is lenient as the
 * known senders are: PHP plugins send amounts as strings ("21.00"), order ids as numbers, `null` for blank
 * fields, and extra keys on items (`tags`, `timestamp`) that are ignored. Numbers and strings are checked
 * and turned into decimals by transactions.input.ts; the request schemas only bound their sizes.
 */

export const MAX_BULK_TRANSACTIONS = 1000
export const MAX_ITEMS_PER_TRANSACTION = 1000
export const MAX_TRANSACTIONS_PAGE = 500
export const DEFAULT_TRANSACTIONS_PAGE = 100

const TEXT = 255
/**
 * A decimal as a JSON number or a numeric string; blank and null mean the field's default (0, or 1 for an
 * item's quantity). One `type` list, not a union: Ajv coerces a union's value into its first branch (null
 * became the number 0, so a null quantity read 0), whereas with a type list it leaves a value of any listed
 * type as it is. String first: a value of another type (a boolean) is coerced to text, which is then refused
 * as no number, instead of `true` being read as 1.
 */
const Money = Type.Unsafe<number | string | null>({
  type: ['string', 'number', 'null'],
  maxLength: 40,
  description: 'decimal number (a numeric string is accepted; null or blank: the default)',
})
const Text = Type.String({ maxLength: TEXT })

export const TransactionInput = Type.Object({
  order_id: Type.String({ minLength: 1, maxLength: TEXT, description: "the shop's order id" }),
  email: Type.String({ maxLength: 254 }),
  shop: Type.Optional(Text),
  amount: Type.Optional(Money),
  tax: Type.Optional(Money),
  shipping: Type.Optional(Money),
  city: Type.Optional(Text),
  county: Type.Optional(Nullable(Text)),
  country: Type.Optional(Text),
  // A type list, as Money: null stays "absent" (now), a number stays a number, and a boolean stays a boolean (the
  // union this was read `true` as the number 1, 1970). `false` is absent too: PHP's strtotime() answers it for a
  // date it cannot read, and Ecomail's WooCommerce plugin sends what it answers; `true` is refused.
  timestamp: Type.Optional(
    Type.Unsafe<number | string | boolean | null>({
      type: ['string', 'number', 'boolean', 'null'],
      maxLength: 64,
      description: 'unix seconds, `YYYY-MM-DD HH:MM:SS` (UTC) or ISO 8601; absent (or null, false): now',
    }),
  ),
  status: Type.Optional(Text),
  props: Type.Optional(Type.Unknown({ description: 'any JSON, returned as given' })),
})
export type TransactionInputT = Static<typeof TransactionInput>

export const TransactionItemInput = Type.Object({
  code: Type.Optional(Text),
  title: Type.Optional(Type.String({ maxLength: 1000 })),
  category: Type.Optional(Type.String({ maxLength: 1000 })),
  price: Type.Optional(Money),
  amount: Type.Optional(Money),
  categories: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: TEXT }), { maxItems: 100 }))),
})
export type TransactionItemInputT = Static<typeof TransactionItemInput>

/**
 * The items: a list, or an object of them under index keys, which is how PHP's json_encode writes a list with
 * gaps in its keys (items left out with unset() or array_filter()); its values are read in key order.
 */
const Items = Type.Union([
  Type.Array(TransactionItemInput, { maxItems: MAX_ITEMS_PER_TRANSACTION }),
  Type.Record(Type.String({ pattern: '^[0-9]{1,9}$' }), TransactionItemInput, {
    maxProperties: MAX_ITEMS_PER_TRANSACTION,
    additionalProperties: false,
  }),
])
export type TransactionItemsInputT = Static<typeof Items>

export const TransactionBody = Type.Object({
  transaction: TransactionInput,
  transaction_items: Type.Optional(Nullable(Items)),
})
export type TransactionBodyT = Static<typeof TransactionBody>

/** PUT: the order id comes from the path; one in the body, if any, must be the same. */
export const TransactionUpdateBody = Type.Object({
  transaction: Type.Object({
    ...TransactionInput.properties,
    order_id: Type.Optional(TransactionInput.properties.order_id),
  }),
  transaction_items: Type.Optional(Nullable(Items)),
})
export type TransactionUpdateBodyT = Static<typeof TransactionUpdateBody>

/**
 * A bulk entry's transaction may be null: shop plugins building a history import send null for an order they
 * could not read (a deleted customer, an address their own check refused) and the rest of the page with it; such
 * an entry is no order and is skipped. A type list rather than a union, so that an object's errors keep their
 * field paths (`transaction_data.3.transaction.amount`).
 */
const BulkTransactionInput = Type.Unsafe<TransactionInputT | null>({
  ...TransactionInput,
  type: ['object', 'null'],
})

export const TransactionBulkBody = Type.Object({
  transaction_data: Type.Array(
    Type.Object({
      transaction: BulkTransactionInput,
      transaction_items: TransactionBody.properties.transaction_items,
    }),
    { maxItems: MAX_BULK_TRANSACTIONS },
  ),
})
export type TransactionBulkBodyT = Static<typeof TransactionBulkBody>

export const OrderRef = Type.Object({
  order_id: Type.String({ minLength: 1, maxLength: TEXT }),
  shop: Type.Optional(OrNull(Text)),
})
export const DeleteBulkBody = Type.Object({
  transaction_data: Type.Array(OrderRef, { maxItems: MAX_BULK_TRANSACTIONS }),
})
export type DeleteBulkBodyT = Static<typeof DeleteBulkBody>

/** `[]` (PHP's empty map) is what the PHP client sends as the body of every DELETE: no shop, every shop's order. */
export const DeleteOneBody = Type.Optional(
  MapOrEmpty(
    Type.Object({
      transaction_data: Type.Optional(MapOrEmpty(Type.Object({ shop: Type.Optional(OrNull(Text)) }))),
    }),
  ),
)
export type DeleteOneBodyT = Static<typeof DeleteOneBody>

export const OrderIdParams = Type.Object({ order_id: Type.String({ minLength: 1, maxLength: TEXT }) })
export const EmailParams = Type.Object({ email: Type.String({ maxLength: 1000 }) })

const Page = {
  page: PageNumber,
  per_page: PerPage(MAX_TRANSACTIONS_PAGE, DEFAULT_TRANSACTIONS_PAGE),
}
export const PageQuery = Type.Object(Page)
export type PageQueryT = Static<typeof PageQuery>

export const ListQuery = Type.Object({
  ...Page,
  shop: Type.Optional(Text),
  email: Type.Optional(Type.String({ maxLength: 254 })),
  date_from: Type.Optional(
    Type.String({ maxLength: 64, description: 'YYYY-MM-DD (inclusive) or a date-time' }),
  ),
  date_to: Type.Optional(
    Type.String({ maxLength: 64, description: 'YYYY-MM-DD (inclusive) or a date-time' }),
  ),
})
export type ListQueryT = Static<typeof ListQuery>

/** api.md "Transaction item". */
export const TransactionItem = Type.Object({
  order_id: Type.String(),
  code: Type.String(),
  title: Type.String(),
  category: Type.String(),
  price: Type.Number(),
  amount: Type.Number({ description: 'quantity' }),
  categories: Type.Array(Type.String()),
})
export type TransactionItemT = Static<typeof TransactionItem>

/** api.md "Transaction (purchase)". */
export const Transaction = Type.Object({
  id: Type.Integer(),
  order_id: Type.String(),
  email: Type.String(),
  shop: Type.String(),
  amount: Type.Number(),
  tax: Type.Number(),
  shipping: Type.Number(),
  city: Type.String(),
  county: Nullable(Type.String()),
  country: Type.String(),
  timestamp: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  props: Type.Unknown(),
  status: Type.String(),
  items: Type.Array(TransactionItem),
})
export type TransactionT = Static<typeof Transaction>

export const TransactionsPage = Type.Object({
  transactions: Type.Array(Transaction),
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
})

/**
 * `GET /tracker/transaction`: the page above, its items also under `data` with `from` and `to` (the positions of
 * its first and last item, null on an empty page), as a paginator shows them: shop plugins page through their
 * imported orders reading `data` and stop when `to` reaches `total`.
 */
export const TrackerTransactionsPage = Type.Object({
  ...TransactionsPage.properties,
  data: Type.Array(Transaction),
  from: Nullable(Type.Integer()),
  to: Nullable(Type.Integer()),
})

export const Inserts = Type.Object({ inserts: Type.Integer() })
export const DeletedCount = Type.Object({ deleted: Type.Integer() })
