export interface Page {
  page: number
  perPage: number
  offset: number
}

export function toPage(page: number | undefined, perPage: number | undefined, defaultPerPage: number): Page {
  const p = page && page > 0 ? page : 1
  const pp = perPage && perPage > 0 ? perPage : defaultPerPage
  return { page: p, perPage: pp, offset: (p - 1) * pp }
}

export function lastPage(total: number, perPage: number): number {
  return Math.max(1, Math.ceil(total / perPage))
}

/**
 * The address of the page after `page` (Laravel's `next_page_url`), or null on the last page: `base` (absolute,
 * without query) with `page` and the given parameters, in that order; undefined ones are left out.
 */
export function nextPageUrl(
  base: string,
  page: Page,
  total: number,
  params: Record<string, string | undefined> = {},
): string | null {
  if (page.offset + page.perPage >= total) return null
  const query = new URLSearchParams({ page: String(page.page + 1) })
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value)
  return `${base}?${query.toString()}`
}
