export { couponFolders, coupons, couponMisses } from './coupons.table.js'
export { couponMissNote } from './coupon-miss-note.sql.js'
export {
  assignCouponVars,
  couponTags,
  couponVarsOfMessage,
  sampleCouponVars,
  type CouponMail,
  type CouponTags,
} from './coupon-vars.js'
