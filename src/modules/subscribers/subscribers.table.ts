import { sql } from 'drizzle-orm'
import {
  index,
  integer,
  jsonb,
  pgTable,
  real,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import { lists } from '../lists/lists.table.js'

/** One person across the account (a "contact"); per-list state lives in `memberships`. */
export const contacts = pgTable(
  'contacts',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** Stored trimmed and lower-cased: one address, one person. */
    email: text('email').notNull(),
    name: text('name').notNull().default(''),
    surname: text('surname').notNull().default(''),
    gender: text('gender').notNull().default(''),
    company: text('company'),
    city: text('city').notNull().default(''),
    street: text('street').notNull().default(''),
    zip: text('zip').notNull().default(''),
    country: text('country').notNull().default(''),
    phone: text('phone'),
    pretitle: text('pretitle').notNull().default(''),
    surtitle: text('surtitle').notNull().default(''),
    birthday: text('birthday'),
    nameday: text('nameday'),
    // Ecomail's fields for Czech greetings: the name and the surname in the vocative ("Jano", "Nováková"),
    // as the person's shop or form gives them (`vokativ`, `vokativ_s` on the wire and in merge tags).
    vokativ: text('vokativ').notNull().default(''),
    vokativS: text('vokativ_s').notNull().default(''),
    customFields: jsonb('custom_fields').$type<Record<string, unknown>>().notNull().default({}),
    tags: text('tags')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    groups: jsonb('groups').$type<Record<string, string[]>>().notNull().default({}),
    rating: real('rating').notNull().default(0),
    bounceSoft: integer('bounce_soft').notNull().default(0),
    bouncedHard: integer('bounced_hard').notNull().default(0),
    bounceMessage: text('bounce_message'),
    /** Account-wide suppression: 'hard_bounce' or 'complaint'; cleared only by an explicit resubscribe. */
    suppressed: text('suppressed').$type<'hard_bounce' | 'complaint'>(),
    insertedAt: timestamp('inserted_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('contacts_account_email_uq').on(t.accountId, t.email),
    // Prefix search (contract §3) on email, name, surname and phone, case-insensitive.
    index('contacts_search_email_idx').on(t.accountId, sql`${t.email} text_pattern_ops`),
    index('contacts_search_name_idx').on(t.accountId, sql`lower(${t.name}) text_pattern_ops`),
    index('contacts_search_surname_idx').on(t.accountId, sql`lower(${t.surname}) text_pattern_ops`),
    index('contacts_search_phone_idx').on(t.accountId, sql`lower(${t.phone}) text_pattern_ops`),
    // subscriber-by-phone compares numbers with their spaces removed.
    index('contacts_phone_digits_idx').on(t.accountId, sql`replace(${t.phone}, ' ', '')`),
  ],
)

/** A contact's subscription to one list, with its own status (1, 2, 4, 5, 6). */
export const memberships = pgTable(
  'memberships',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id').notNull(),
    listId: integer('list_id')
      .notNull()
      .references(() => lists.id, { onDelete: 'cascade' }),
    contactId: integer('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    status: smallint('status').notNull(),
    source: text('source').notNull().default('api'),
    subscribedAt: timestamp('subscribed_at', { withTimezone: true }).notNull().defaultNow(),
    unsubscribedAt: timestamp('unsubscribed_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memberships_list_contact_uq').on(t.listId, t.contactId),
    index('memberships_list_status_idx').on(t.listId, t.status, t.id),
    index('memberships_contact_idx').on(t.contactId),
  ],
)
