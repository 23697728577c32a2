export { createAccountService, PLANS } from './accounts.service.js'
export type { AccountService, CreatedAccount } from './accounts.service.js'
