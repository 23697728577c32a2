import type { ModuleDef } from '../registry.js'
import { transactionRoutes } from './transactions.routes.js'

export { transactions, transactionItems } from './transactions.table.js'
export { pseudonymisePurchases } from './transactions.repo.js'

export const transactionsModule: ModuleDef = { name: 'transactions', apiRoutes: transactionRoutes }
