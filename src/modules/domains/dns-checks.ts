import type { DnsLookup } from './dns-lookup.js'
import { recordsFor, type RecordKey, type RecordSource } from './dns-records.js'

/** Result of one record's check: `error` is a DNS code, or why the record found does not do. */
export interface RecordCheck {
  valid: boolean
  error?: string
}
export type DomainChecks = Partial<Record<RecordKey, RecordCheck>>

const RECORD_KEYS: readonly RecordKey[] = ['dkim', 'spf', 'dmarc', 'bounce_mx']

/** DKIM signs with the key; SPF lets receivers accept the envelope. DMARC and the bounce MX only help. */
export function isVerified(checks: DomainChecks): boolean {
  return checks.dkim?.valid === true && checks.spf?.valid === true
}

/** RFC 6376 §3.2 tag list. Tag names are case-sensitive; whitespace inside a value (split base64) is folding. */
function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>()
  for (const part of record.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    tags.set(part.slice(0, eq).trim(), part.slice(eq + 1).replace(/\s+/g, ''))
  }
  return tags
}

function carriesKey(record: string, publicKey: string): boolean {
  const tags = dkimTags(record)
  const v = tags.get('v')
  const k = tags.get('k')
  return (v === undefined || v === 'DKIM1') && (k === undefined || k === 'rsa') && tags.get('p') === publicKey
}

/**
 * RFC 7208 §4.5 and RFC 7489 §6.6.3: two records of the kind make receivers ignore both (SPF permerror, no DMARC
 * policy), so only exactly one counts.
 */
function exactlyOne(records: string[], pattern: RegExp): RecordCheck {
  const matching = records.filter((r) => pattern.test(r.trim()))
  if (matching.length === 1) return { valid: true }
  return { valid: false, error: matching.length === 0 ? 'missing' : 'multiple' }
}

/** Looks every record of the domain up and says, per record, whether it is published as it must be. */
export async function checkRecords(
  lookup: DnsLookup,
  domain: RecordSource,
  mailHost: string,
): Promise<DomainChecks> {
  const specs = new Map(recordsFor(domain, mailHost).map((s) => [s.key, s]))
  const host = (key: RecordKey) => specs.get(key)!.host

  const [dkim, spf, dmarc, mx] = await Promise.all([
    lookup.txt(host('dkim')),
    lookup.txt(host('spf')),
    lookup.txt(host('dmarc')),
    lookup.mx(host('bounce_mx')),
  ])
  const checks: DomainChecks = {}
  checks.dkim = dkim.error
    ? { valid: false, error: dkim.error }
    : dkim.values.some((r) => carriesKey(r, domain.dkimPublicKey))
      ? { valid: true }
      : { valid: false, error: 'mismatch' }
  checks.spf = spf.error ? { valid: false, error: spf.error } : exactlyOne(spf.values, /^v=spf1(\s|$)/i)
  checks.dmarc = dmarc.error
    ? { valid: false, error: dmarc.error }
    : exactlyOne(dmarc.values, /^v\s*=\s*DMARC1\s*(;|$)/i)
  const target = mailHost.toLowerCase()
  checks.bounce_mx = mx.error
    ? { valid: false, error: mx.error }
    : mx.values.some((m) => m.exchange.toLowerCase().replace(/\.$/, '') === target)
      ? { valid: true }
      : { valid: false, error: 'mismatch' }
  return checks
}

/** Reads the stored JSON back, keeping only what this code wrote: the column is free-form `jsonb`. */
export function readChecks(raw: Record<string, unknown>): DomainChecks {
  const out: DomainChecks = {}
  for (const key of RECORD_KEYS) {
    const entry = raw[key]
    if (entry && typeof entry === 'object' && typeof (entry as RecordCheck).valid === 'boolean') {
      const { valid, error } = entry as RecordCheck
      out[key] = typeof error === 'string' ? { valid, error } : { valid }
    }
  }
  return out
}
