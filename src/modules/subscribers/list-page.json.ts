import type { ListPageRow } from './list-page.repo.js'

const str = (value: string | null): string => JSON.stringify(value)

/**
 * The `data` array of `GET /lists/{id}/subscribers` as JSON text. Field for field this is toListPageEntry()
 * (subscribers.schemas.ts) serialised, written straight from the row: at 5,000 entries a page, building objects
 * and serialising them again cost more than the query (measured, see the bench). The tests compare the two.
 */
export function listPageEntriesJson(rows: readonly ListPageRow[]): string {
  const parts: string[] = []
  for (const r of rows) {
    const email = str(r.email)
    parts.push(
      `{"id":${r.membership_id},"list_id":${r.list_id},"email":${email},"status":${r.status},` +
        `"subscribed_at":${str(r.subscribed_at)},"unsubscribed_at":${str(r.unsubscribed_at)},` +
        `"custom_fields":${r.custom_fields},"groups":${r.groups},"source":${str(r.source)},` +
        `"subscriber":{"id":${r.id},"name":${str(r.name)},"surname":${str(r.surname)},"email":${email},` +
        `"gender":${str(r.gender)},"company":${str(r.company)},"city":${str(r.city)},` +
        `"country":${str(r.country)},"phone":${str(r.phone)}}}`,
    )
  }
  return `[${parts.join(',')}]`
}
