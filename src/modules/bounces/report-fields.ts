import addressparser from 'nodemailer/lib/addressparser'

/**
 * Header-style field blocks as they appear in message/delivery-status (RFC 3464), message/feedback-report
 * (RFC 5965) and the returned original headers. mailparser hands those parts over as raw attachments, so
 * their fields are read here. Names are lower-cased; every value of a repeated field is kept (Received).
 */
export type Fields = Map<string, string[]>

/** Reads one block of "Name: value" lines; lines starting with white space continue the previous field. */
export function parseFields(block: string): Fields {
  const fields: Fields = new Map()
  let last: string[] | undefined
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line)) {
      // Unfolding: the continuation belongs to the value above (RFC 5322 2.2.3).
      if (last && last.length) last[last.length - 1] += ` ${line.trim()}`
      continue
    }
    const colon = line.indexOf(':')
    if (colon <= 0) {
      last = undefined
      continue
    }
    const name = line.slice(0, colon).trim().toLowerCase()
    const values = fields.get(name) ?? []
    values.push(line.slice(colon + 1).trim())
    fields.set(name, values)
    last = values
  }
  return fields
}

/** A delivery-status body: per-message fields, then one block per recipient, separated by blank lines. */
export function parseFieldBlocks(text: string): Fields[] {
  return text
    .split(/\r?\n[ \t]*\r?\n/)
    .map(parseFields)
    .filter((f) => f.size > 0)
}

/** The header section of a returned message (everything before the first blank line). */
export function headerSection(raw: string): string {
  const end = raw.search(/\r?\n\r?\n/)
  return end < 0 ? raw : raw.slice(0, end)
}

export function first(fields: Fields | undefined, name: string): string | undefined {
  const value = fields?.get(name)?.[0]
  return value === undefined || value === '' ? undefined : value
}

/** Collapses folding and runs of white space to one line. */
export function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim()
}

/** The first mailbox in an address field; undefined for the null path `<>` and for anything without an @. */
export function addressOf(value: string | undefined): string | undefined {
  if (!value) return undefined
  for (const parsed of addressparser(value, { flatten: true })) {
    const address = parsed.address.trim()
    if (address.includes('@')) return address
  }
  return undefined
}

/** DSN and ARF address fields carry a type: "rfc822; jan@example.org" (RFC 3464 2.3.2). */
export function typedAddressOf(value: string | undefined): string | undefined {
  if (!value) return undefined
  const semi = value.indexOf(';')
  return addressOf(semi >= 0 ? value.slice(semi + 1) : value)
}

/** The first `<id>` of a Message-ID / In-Reply-To style field, brackets kept as we write them. */
export function messageIdOf(value: string | undefined): string | undefined {
  return value?.match(/<[^<>\s]+>/)?.[0]
}

/**
 * The envelope sender a relay recorded in its Received line: Exim "(envelope-from <a@b>)",
 * Sendmail "(envelope-sender <a@b>)". Used when the returned headers carry no Return-Path.
 */
export function envelopeFromReceived(received: readonly string[]): string | undefined {
  for (const line of received) {
    const match = /envelope-(?:from|sender)\s*<?([^\s<>;()]+@[^\s<>;()]+)>?/i.exec(line)
    if (match?.[1]) return match[1]
  }
  return undefined
}
