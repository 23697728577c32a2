import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { ConfirmationMailInput } from './confirmation.mail.js'
import type { ConfirmTarget } from './confirmation.links.js'
import { contactMergeColumns, type ContactForMerge } from '../messages/index.js'

/** Membership statuses (api.md): only an unconfirmed membership is asked for, and moved by, a confirmation. */
const SUBSCRIBED = 1
const UNCONFIRMED = 6

export interface PendingConfirmation extends ConfirmTarget {
  accountId: number
}

type Recipient = Pick<ConfirmationMailInput, 'list'> & {
  /** The person, with every column merge tags can name (contract §7). */
  contact: ContactForMerge
}

/** The list and person of a membership that still waits for confirmation; undefined once it does not. */
export async function findUnconfirmedRecipient(
  ex: Executor,
  p: PendingConfirmation,
): Promise<Recipient | undefined> {
  const row = await queryOne<
    {
      list_name: string
      from_name: string
      from_email: string
      reply_to: string
      conf_subject: string
      conf_message: string
    } & ContactForMerge
  >(
    ex,
    sql`SELECT l.name AS list_name, l.from_name, l.from_email, l.reply_to, l.conf_subject, l.conf_message,
               ${contactMergeColumns('c')}
        FROM memberships m
        JOIN lists l ON l.id = m.list_id
        JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = ${p.listId} AND m.contact_id = ${p.contactId}
          AND l.account_id = ${p.accountId} AND m.status = ${UNCONFIRMED}`,
  )
  if (!row) return undefined
  const { list_name, from_name, from_email, reply_to, conf_subject, conf_message, ...contact } = row
  return {
    list: {
      name: list_name,
      fromName: from_name,
      fromEmail: from_email,
      replyTo: reply_to,
      confSubject: conf_subject,
      confMessage: conf_message,
    },
    contact,
  }
}

/**
 * Side effect: moves the membership from unconfirmed to subscribed, in one statement so two clicks at once
 * confirm it once. Any other status stays as it is. The account and address when this call made the change.
 */
export async function confirmMembership(
  ex: Executor,
  t: ConfirmTarget,
  now: Date,
): Promise<{ accountId: number; email: string } | undefined> {
  const at = now.toISOString()
  return queryOne<{ accountId: number; email: string }>(
    ex,
    sql`UPDATE memberships m
        SET status = ${SUBSCRIBED}, subscribed_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
        FROM contacts c
        WHERE m.list_id = ${t.listId} AND m.contact_id = ${t.contactId} AND m.status = ${UNCONFIRMED}
          AND c.id = m.contact_id
        RETURNING m.account_id AS "accountId", c.email`,
  )
}

/**
 * The list's "subscription confirmed" page ('' when it has none) and the address of the person who confirmed;
 * undefined when the list or the contact is gone.
 */
export async function findConfirmedPage(
  ex: Executor,
  t: ConfirmTarget,
): Promise<{ page: string; email: string } | undefined> {
  return queryOne<{ page: string; email: string }>(
    ex,
    sql`SELECT l.sub_confirmed_page AS page, c.email FROM lists l, contacts c
        WHERE l.id = ${t.listId} AND c.id = ${t.contactId}`,
  )
}
