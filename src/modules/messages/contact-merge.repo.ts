import { sql, type SQL } from 'drizzle-orm'
import type { ContactForMerge } from './contact-vars.js'

/**
 * The contact columns ContactForMerge holds, each marked `text` (never null in `contacts`: empty when unset, so
 * an outer join that finds no contact reads '' too) or `nullable` (read as it is: null, or jsonb for
 * custom_fields). A record over every key, so a field added to ContactForMerge does not compile until it is read
 * here: the four statements that read a contact for merge tags listed the columns by hand, and a new field had
 * to be added to each.
 */
const MERGE_COLUMNS: Record<keyof ContactForMerge, 'text' | 'nullable'> = {
  email: 'text',
  name: 'text',
  surname: 'text',
  gender: 'text',
  company: 'nullable',
  city: 'text',
  street: 'text',
  zip: 'text',
  country: 'text',
  phone: 'nullable',
  pretitle: 'text',
  surtitle: 'text',
  birthday: 'nullable',
  nameday: 'nullable',
  vokativ: 'text',
  vokativ_s: 'text',
  custom_fields: 'nullable',
}

/**
 * `alias.name, alias.surname, …` for a select list: what contactMergeVars needs of the contact `alias` names.
 * `outerJoined`: the contact may be missing (a LEFT JOIN), so text columns read '' rather than null, as the
 * table would give them. `without` leaves out columns the statement takes from elsewhere (the ledger's own email).
 */
export function contactMergeColumns(
  alias: string,
  opts: { outerJoined?: boolean; without?: readonly (keyof ContactForMerge)[] } = {},
): SQL {
  const parts = Object.entries(MERGE_COLUMNS)
    .filter(([name]) => !opts.without?.includes(name as keyof ContactForMerge))
    .map(([name, kind]) =>
      opts.outerJoined && kind === 'text' ? `coalesce(${alias}.${name}, '') AS ${name}` : `${alias}.${name}`,
    )
  return sql.raw(parts.join(', '))
}
