/** `*|EMAIL|*` in any case, its pipes as written or percent-encoded (as a URL field may hold them). */
const EMAIL_TAG = /\*(?:\||%7C)EMAIL(?:\||%7C)\*/gi

/**
 * A list's page (`sub_confirmed_page`, `unsub_page`) as a redirect target: only absolute http(s) URLs become a
 * Location, anything else none; `href` also drops any CR/LF the stored text may hold. `*|EMAIL|*` in it is the
 * person's address, URL-encoded: Ecomail's documented example of the confirmed page is
 * `https://www.example.com/confirm?email=*|EMAIL|*`, and lists moved over keep such pages.
 */
export function redirectTarget(page: string | null | undefined, email?: string): string | null {
  if (!page?.trim()) return null
  const filled = page.trim().replace(EMAIL_TAG, () => encodeURIComponent(email ?? ''))
  try {
    const url = new URL(filled)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}
