export { transactions, transactionItems } from './transactions.table.js'
export { pseudonymisePurchases } from './transactions.repo.js'
