/** The records a domain's owner publishes, one per purpose; `checks` in the table is keyed the same way. */
export type RecordKey = 'dkim' | 'spf' | 'dmarc' | 'bounce_mx'

export interface DnsRecordSpec {
  key: RecordKey
  type: 'TXT' | 'MX'
  host: string
  value: string
  /** MX preference; DNS panels ask for it separately from the target host. */
  priority?: number
}

/** The facts about a domain the records are made of (both variants of a name share them). */
export interface RecordSource {
  name: string
  dkimSelector: string
  dkimPublicKey: string
}

/** SPF the domain publishes when it has none: its own hosts may send, others soft-fail. */
export const SPF_VALUE = 'v=spf1 a mx ~all'
/** Monitoring-only DMARC: reports without rejecting, the safe first step for a domain new to DKIM. */
export const DMARC_VALUE = 'v=DMARC1; p=none'
export const BOUNCE_MX_PRIORITY = 10

/**
 * The host bounces come back to: VERP return paths are `bounces+<token>@bounces.<name>`, and its MX points at
 * the BOUNCE_SMTP_PORT listener. A subdomain, so the domain's own MX (its people's mail) stays untouched.
 */
export function bounceHostFor(domainName: string): string {
  return `bounces.${domainName}`
}

export function dkimHostFor(selector: string, domainName: string): string {
  return `${selector}._domainkey.${domainName}`
}

export function dkimValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${publicKey}`
}

/**
 * What to publish, in the order a person sets them up. `mailHost` is the host name of PUBLIC_URL, where the
 * bounce listener runs.
 */
export function recordsFor(domain: RecordSource, mailHost: string): DnsRecordSpec[] {
  return [
    {
      key: 'dkim',
      type: 'TXT',
      host: dkimHostFor(domain.dkimSelector, domain.name),
      value: dkimValue(domain.dkimPublicKey),
    },
    { key: 'spf', type: 'TXT', host: domain.name, value: SPF_VALUE },
    { key: 'dmarc', type: 'TXT', host: `_dmarc.${domain.name}`, value: DMARC_VALUE },
    {
      key: 'bounce_mx',
      type: 'MX',
      host: bounceHostFor(domain.name),
      value: mailHost,
      priority: BOUNCE_MX_PRIORITY,
    },
  ]
}

/** The host name of PUBLIC_URL, without IPv6 brackets. */
export function mailHostOf(publicUrl: string): string {
  return new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1')
}
