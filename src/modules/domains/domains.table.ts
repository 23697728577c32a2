import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

export type DomainType = 'sending' | 'transactional'

/** A domain the account sends from; one name may be held as both a sending and a transactional domain. */
export const domains = pgTable(
  'domains',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    type: text('type').$type<DomainType>().notNull(),
    valid: boolean('valid').notNull().default(false),
    blocked: boolean('blocked').notNull().default(false),
    dkimSelector: text('dkim_selector').notNull(),
    /** PKCS#8 PEM; never leaves the service except inside DKIM signatures. */
    dkimPrivateKey: text('dkim_private_key').notNull(),
    /** Base64 SubjectPublicKeyInfo, as published in the DKIM TXT record. */
    dkimPublicKey: text('dkim_public_key').notNull(),
    /** Result of the last DNS check per record. */
    checks: jsonb('checks').$type<Record<string, unknown>>().notNull().default({}),
    checkedAt: timestamp('checked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('domains_account_name_type_uq').on(t.accountId, t.name, t.type),
    index('domains_name_idx').on(t.name),
  ],
)
