import net from 'node:net'
import { forbiddenAddressReason } from './address-policy.js'

/**
 * The rules a customer URL must meet before anything is dialled: http or https, a host, no credentials.
 * Returns the parsed URL, or the reason it is refused (fit for a 422 message: it never echoes the URL).
 */
export function parseOutboundUrl(raw: string): { url: URL } | { error: string } {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { error: 'The url is not a valid URL' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { error: 'The url must start with http:// or https://' }
  if (!url.hostname) return { error: 'The url must name a host' }
  if (url.username || url.password) return { error: 'The url must not contain credentials' }
  return { url }
}

/** The URL's host as an IP address when it is written as one (`[::1]` → `::1`), else undefined. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return net.isIP(host) ? host : undefined
}

/**
 * The 422 message for a URL a customer saves (webhook, webhook node, feed) that names a private, loopback or
 * link-local host outright, unless private networks are allowed (ALLOW_PRIVATE_NETWORK); undefined when it may be
 * saved. Only the obvious is caught here: names are judged again on the address dialled (outbound.ts).
 */
export function privateTargetError(url: URL, allowPrivateNetwork: boolean): string | undefined {
  return !allowPrivateNetwork && forbiddenHostReason(url)
    ? 'The url must not point to a private, loopback or link-local address'
    : undefined
}

/**
 * Why the URL's host is refused without asking DNS: an IP literal in a forbidden range, or a `localhost`
 * name. Names are judged again, for real, on the address actually dialled (see outbound.ts).
 */
export function forbiddenHostReason(url: URL): string | undefined {
  const literal = literalAddress(url)
  if (literal) return forbiddenAddressReason(literal)
  const host = url.hostname.toLowerCase().replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback'
  return undefined
}
