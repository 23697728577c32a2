import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted } from '../../core/http/schemas.js'
import {
  DeleteBulkBody,
  DeletedCount,
  DeleteOneBody,
  EmailParams,
  Inserts,
  ListQuery,
  OrderIdParams,
  PageQuery,
  Transaction,
  TransactionBody,
  TransactionBulkBody,
  TrackerTransactionsPage,
  TransactionsPage,
  TransactionUpdateBody,
} from './transactions.schemas.js'
import { createTransactionService } from './transactions.service.js'

const tags = ['Transactions']

/** The tracker's purchase endpoints (contract §9) and a subscriber's purchases (api.md). */
export function transactionRoutes(app: ApiApp, ctx: AppContext): void {
  const service = createTransactionService(ctx)

  app.post(
    '/tracker/transaction',
    {
      schema: {
        tags,
        operationId: 'createTransaction',
        summary: 'Record a purchase',
        description: 'One order id per shop: a second POST of the same order answers 422 (use PUT).',
        body: TransactionBody,
        response: { 200: Transaction, ...commonErrors },
      },
    },
    async (req) => service.create(req.account.id, req.body),
  )
  app.put(
    '/tracker/transaction/:order_id',
    {
      schema: {
        tags,
        operationId: 'updateTransaction',
        summary: 'Overwrite a purchase and its items',
        description:
          'Matches the order id in `transaction.shop` when given, else in whichever shop has it (422 when several do).',
        params: OrderIdParams,
        body: TransactionUpdateBody,
        response: { 200: Transaction, ...commonErrors },
      },
    },
    async (req) => service.update(req.account.id, req.params.order_id, req.body),
  )
  app.get(
    '/tracker/transaction',
    {
      schema: {
        tags,
        operationId: 'listTransactions',
        summary: 'Purchases of the account, newest first',
        querystring: ListQuery,
        response: { 200: TrackerTransactionsPage, ...commonErrors },
      },
    },
    async (req) => service.list(req.account.id, req.query),
  )
  app.post(
    '/tracker/transaction-bulk',
    {
      schema: {
        tags,
        operationId: 'importTransactions',
        summary: 'Record up to 1000 purchases at once (existing orders are overwritten)',
        body: TransactionBulkBody,
        response: { 200: Inserts, ...commonErrors },
      },
    },
    async (req) => service.bulk(req.account.id, req.body),
  )
  app.delete(
    '/tracker/transaction/delete-bulk',
    {
      schema: {
        tags,
        operationId: 'deleteTransactions',
        summary: 'Delete up to 1000 purchases by order id (and shop, when given)',
        body: DeleteBulkBody,
        response: { 200: DeletedCount, ...commonErrors },
      },
    },
    async (req) => service.deleteBulk(req.account.id, req.body),
  )
  app.delete(
    '/tracker/transaction/:order_id/delete',
    {
      schema: {
        tags,
        operationId: 'deleteTransaction',
        summary: 'Delete a purchase by order id',
        description: 'With `transaction_data.shop`, only when the shop matches; without, in every shop.',
        params: OrderIdParams,
        body: DeleteOneBody,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => service.deleteOne(req.account.id, req.params.order_id, req.body),
  )
  app.get(
    '/subscribers/:email/transactions',
    {
      schema: {
        tags: ['Subscribers'],
        operationId: 'getSubscriberTransactions',
        summary: "A subscriber's purchases with their items, newest first",
        params: EmailParams,
        querystring: PageQuery,
        response: { 200: TransactionsPage, ...commonErrors },
      },
    },
    async (req) => service.ofSubscriber(req.account.id, req.params.email, req.query),
  )
}
