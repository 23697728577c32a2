import type { DbHandle } from '../../core/db/client.js'
import type { ContactRow, MembershipRow } from './subscribers.schemas.js'

/**
 * The hot read of the API (`GET /lists/{id}/subscriber/{email}`, shop plugins call it per page view): the list
 * check and the member lookup in ONE statement, sent as raw SQL because the query builder's per-call cost
 * was as large as the database's. Rows come back as JSON so one column carries a whole contact.
 */
const MEMBER_BY_EMAIL = `
  SELECT (SELECT json_build_array(to_jsonb(c), to_jsonb(m))
          FROM contacts c JOIN memberships m ON m.contact_id = c.id AND m.list_id = l.id
          WHERE c.account_id = $1 AND c.email = $3) AS member
  FROM lists l WHERE l.id = $2 AND l.account_id = $1`

type Json = Record<string, unknown>

const camel = (k: string) => k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())

function fromJson<T>(obj: Json, dates: readonly string[]): T {
  const out: Json = {}
  for (const [k, v] of Object.entries(obj))
    out[camel(k)] = dates.includes(k) && typeof v === 'string' ? new Date(v) : v
  return out as T
}

const CONTACT_DATES = ['inserted_at', 'updated_at'] as const
const MEMBERSHIP_DATES = ['subscribed_at', 'unsubscribed_at', 'updated_at'] as const

export interface ListMemberLookup {
  listFound: boolean
  member?: { c: ContactRow; m: MembershipRow }
}

export async function findListMemberByEmail(
  db: DbHandle,
  accountId: number,
  listId: number,
  email: string,
): Promise<ListMemberLookup> {
  const { rows } = await db.prepared('tidings_member_by_email', MEMBER_BY_EMAIL, [accountId, listId, email])
  const row = rows[0] as { member: [Json, Json] | null } | undefined
  if (!row) return { listFound: false }
  if (!row.member) return { listFound: true }
  return {
    listFound: true,
    member: {
      c: fromJson<ContactRow>(row.member[0], CONTACT_DATES),
      m: fromJson<MembershipRow>(row.member[1], MEMBERSHIP_DATES),
    },
  }
}
