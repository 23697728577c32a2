import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { SearchBody, SearchQuery, SearchReply } from './search.schemas.js'
import { createSearchService } from './search.service.js'

const tags = ['Search']
const summary = 'Subscribers whose email, name, surname or phone starts with the query'

/** Both forms real clients use (contract §1 aliases): `GET /search?query=` and `POST /search {"query"}`. */
export function searchRoutes(app: ApiApp, ctx: AppContext): void {
  const search = createSearchService(ctx)

  app.get(
    '/search',
    {
      schema: {
        operationId: 'searchSubscribers',
        tags,
        summary,
        querystring: SearchQuery,
        response: { 200: SearchReply, ...commonErrors },
      },
    },
    async (req) => search.search(req.account.id, req.query),
  )
  app.post(
    '/search',
    {
      schema: {
        operationId: 'searchSubscribersByBody',
        tags,
        summary,
        body: SearchBody,
        response: { 200: SearchReply, ...commonErrors },
      },
    },
    async (req) => search.search(req.account.id, req.body),
  )
}
