import {
  bigint,
  bigserial,
  boolean,
  date,
  index,
  integer,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { accounts } from '../accounts/accounts.table.js'

/** Folders of discount codes (contract §7); every account has one default folder, made when first needed. */
export const couponFolders = pgTable(
  'coupon_folders',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('coupon_folders_account_idx').on(t.accountId),
    // At most one default per account: two requests creating it at once meet here (ON CONFLICT DO NOTHING).
    uniqueIndex('coupon_folders_default_uq')
      .on(t.accountId)
      .where(sql`is_default`),
  ],
)

/**
 * One discount code. Import order is (created_at, id): the oldest codes are handed out first. A code is handed out by
 * setting `message_id` to the mail (`messages` row) that carries it: one code per row, so never to two
 * people, and the unique (message_id, folder_id) makes a mail that is sent again find the code it had.
 */
export const coupons = pgTable(
  'coupons',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    folderId: integer('folder_id')
      .notNull()
      .references(() => couponFolders.id, { onDelete: 'cascade' }),
    code: text('code').notNull(),
    /** Valid through this day (UTC); null: no end. */
    validUntil: date('valid_until', { mode: 'string' }),
    // No foreign key to messages: the claim updates hundreds of rows per batch and must stay cheap.
    messageId: bigint('message_id', { mode: 'number' }),
    assignedAt: timestamp('assigned_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('coupons_folder_code_uq').on(t.folderId, t.code),
    uniqueIndex('coupons_message_folder_uq')
      .on(t.messageId, t.folderId)
      .where(sql`message_id IS NOT NULL`),
    // The claim walks the free codes of a folder in import order (created_at, then id). Ordering by id alone
    // lets the planner, with statistics from before a campaign, walk the primary key through every code
    // handed out so far instead (seen: 15 ms per batch at the start of a 100,000-code folder, 75 ms at the end).
    index('coupons_free_idx')
      .on(t.folderId, t.createdAt, t.id)
      .where(sql`message_id IS NULL`),
  ],
)

/** A mail that asked a folder for a code and found none left (queryable; the sender also logs a warning). */
export const couponMisses = pgTable(
  'coupon_misses',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    folderId: integer('folder_id')
      .notNull()
      .references(() => couponFolders.id, { onDelete: 'cascade' }),
    messageId: bigint('message_id', { mode: 'number' }).notNull(),
    campaignId: integer('campaign_id').notNull().default(0),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('coupon_misses_message_folder_uq').on(t.messageId, t.folderId),
    index('coupon_misses_folder_idx').on(t.folderId),
  ],
)
