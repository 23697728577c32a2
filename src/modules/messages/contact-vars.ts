import type { MergeValue } from '../../core/mail/merge-tags.js'

/** The contact columns merge tags can name (contract §7: subscriber fields and custom_fields keys). */
export interface ContactForMerge {
  email: string
  name: string
  surname: string
  gender: string
  company: string | null
  city: string
  street: string
  zip: string
  country: string
  phone: string | null
  pretitle: string
  surtitle: string
  birthday: string | null
  nameday: string | null
  vokativ: string
  vokativ_s: string
  custom_fields: Record<string, unknown> | null
}

function scalar(v: unknown): MergeValue {
  if (v === null || v === undefined) return undefined
  // A typed custom field is stored as {value, type}; its value is what a merge tag shows.
  if (typeof v === 'object' && !Array.isArray(v) && 'value' in v) return scalar(v.value)
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return JSON.stringify(v)
}

/**
 * A subscriber's merge variables by lower-cased name: custom fields first, so a custom field can never
 * hide a subscriber field of the same name. No prototype: `*|constructor|*` renders empty.
 */
export function contactMergeVars(c: ContactForMerge): Record<string, MergeValue> {
  const vars = Object.create(null) as Record<string, MergeValue>
  for (const [k, v] of Object.entries(c.custom_fields ?? {})) vars[k.toLowerCase()] = scalar(v)
  // Property by property rather than Object.assign of a literal: one object per recipient, not two (a
  // campaign batch's values live until the batch is signed; allocation profile of a send).
  vars.email = c.email
  vars.name = c.name
  vars.surname = c.surname
  vars.gender = c.gender
  vars.company = c.company ?? ''
  vars.city = c.city
  vars.street = c.street
  vars.zip = c.zip
  vars.country = c.country
  vars.phone = c.phone ?? ''
  vars.pretitle = c.pretitle
  vars.surtitle = c.surtitle
  vars.birthday = c.birthday ?? ''
  vars.nameday = c.nameday ?? ''
  // Where the person has none, a custom field of that name (what accounts kept before these fields) shows.
  if (c.vokativ || vars.vokativ === undefined) vars.vokativ = c.vokativ
  if (c.vokativ_s || vars.vokativ_s === undefined) vars.vokativ_s = c.vokativ_s
  return vars
}

/** contactMergeVars as text, as a body row's per-recipient `vars` hold them (absent values empty). */
export function contactMergeText(c: ContactForMerge): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(contactMergeVars(c)))
    out[k] = v === null || v === undefined ? '' : String(v)
  return out
}
