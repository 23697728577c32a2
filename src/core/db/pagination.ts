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
