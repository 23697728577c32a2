import type { ModuleDef } from '../registry.js'
import { adminRoutes } from './admin.routes.js'

export { createAccountService, PLANS } from './accounts.service.js'
export type { AccountService, CreatedAccount } from './accounts.service.js'

export const accountsModule: ModuleDef = { name: 'accounts', publicRoutes: adminRoutes }
