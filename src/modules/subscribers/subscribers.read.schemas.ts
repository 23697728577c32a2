import { Type, type Static } from '@sinclair/typebox'
import {
  commonErrors,
  ErrorList,
  MessageError,
  Nullable,
  PageNumber,
  PerPage,
} from '../../core/http/schemas.js'
import { GlobalSubscriber, ListPageEntry, STATUS_FILTERS, SubscriberDetail } from './subscribers.schemas.js'

/** Request and reply envelopes of the read endpoints; the subscriber shapes themselves are shared. */

export type StatusFilter = keyof typeof STATUS_FILTERS
const statusNames = Object.keys(STATUS_FILTERS) as StatusFilter[]

export const MAX_LIST_PAGE = 5000
export const DEFAULT_LIST_PAGE = 20

export const ListPageQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_LIST_PAGE, DEFAULT_LIST_PAGE),
  // '' is what form builders send for "not chosen"; it means the default, as an absent parameter does.
  status: Type.Optional(
    Type.Union([...statusNames.map((s) => Type.Literal(s)), Type.Literal('')], {
      description: `one of ${statusNames.join(', ')}; default subscribed`,
    }),
  ),
})
export type ListPageQueryT = Static<typeof ListPageQuery>

export const ListPage = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(ListPageEntry),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
  next_page_url: Nullable(
    Type.String({ description: 'the next page, absolute under PUBLIC_URL; null on the last page' }),
  ),
})

export const ListEmailParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  email: Type.String({ maxLength: 1000 }),
})
export const ListPhoneParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  phone: Type.String({ maxLength: 1000 }),
})
export const EmailParams = Type.Object({ email: Type.String({ maxLength: 1000 }) })

export const SubscriberDetailReply = Type.Object({ subscriber: SubscriberDetail })
export const GlobalSubscriberReply = Type.Object({ subscriber: GlobalSubscriber })

/** A list route can answer 404 two ways: the list is unknown (`{message}`) or the person is not in it (`{errors}`). */
export const listMemberErrors = { ...commonErrors, 404: Type.Union([MessageError, ErrorList]) }
