import type { ModuleDef } from '../registry.js'
import { couponRoutes } from './coupons.routes.js'

/** Discount coupons (api.md, contract §7): folders, import and delete; senders hand codes out through coupon-vars. */
export const couponsModule: ModuleDef = { name: 'coupons', apiRoutes: couponRoutes }
