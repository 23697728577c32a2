/**
 * A list's page (`sub_confirmed_page`, `unsub_page`) as a redirect target: only absolute http(s) URLs become a
 * Location, anything else none; `href` also drops any CR/LF the stored text may hold.
 */
export function redirectTarget(page: string | null | undefined): string | null {
  if (!page?.trim()) return null
  try {
    const url = new URL(page.trim())
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}
