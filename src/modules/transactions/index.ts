export { transactions, type TransactionItem } from './transactions.table.js'
