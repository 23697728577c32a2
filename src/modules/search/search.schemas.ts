import { Type, type Static } from '@sinclair/typebox'
import { PageNumber, PerPage } from '../../core/http/schemas.js'
import { GlobalSubscriber } from '../subscribers/index.js'

export const MAX_SEARCH_PAGE = 100
export const DEFAULT_SEARCH_PAGE = 20

/** The same fields arrive as the query string of `GET /search` or the JSON body of `POST /search`. */
const searchFields = {
  query: Type.String({ maxLength: 255, description: 'prefix of an email, name, surname or phone' }),
  page: PageNumber,
  per_page: PerPage(MAX_SEARCH_PAGE, DEFAULT_SEARCH_PAGE),
}
export const SearchQuery = Type.Object(searchFields)
export const SearchBody = Type.Object(searchFields)
export type SearchInput = Static<typeof SearchQuery>

export const SearchReply = Type.Object({ data: Type.Array(GlobalSubscriber), total: Type.Integer() })
