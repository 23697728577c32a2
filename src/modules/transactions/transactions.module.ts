import type { ModuleDef } from '../registry.js'
import { transactionRoutes } from './transactions.routes.js'

export const transactionsModule: ModuleDef = { name: 'transactions', apiRoutes: transactionRoutes }
