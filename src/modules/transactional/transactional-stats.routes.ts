import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { mailStats } from './transactional-stats.service.js'

const count = (description: string) => Type.Integer({ minimum: 0, description })
const rate = (description: string) => Type.Number({ description: `${description}, % rounded to 2 decimals` })

/** Contract §9: the figures of contract §5, without the campaign-only ones. */
const MailStats = Type.Object({
  inject: count('messages the relay accepted'),
  delivery: count('inject − unique bounces'),
  delivery_rate: rate('delivery / inject'),
  open: count('messages opened'),
  total_open: count('all opens'),
  open_rate: rate('open / delivery'),
  click: count('messages clicked'),
  total_click: count('all clicks'),
  click_rate: rate('click / delivery'),
  bounce: count('messages bounced, hard or soft'),
  bounce_rate: rate('bounce / inject'),
  spam: count('complaints'),
  spam_rate: rate('spam / delivery'),
  unsub: count('unsubscriptions'),
  unsub_rate: rate('unsub / delivery'),
})

const StatsDate = (description: string) =>
  Type.String({ maxLength: 64, description: `YYYY-MM-DD, UTC; ${description}` })
const StatsQuery = Type.Object({
  from_date: Type.Optional(StatsDate('mail sent from this day on; not more than one year back')),
  to_date: Type.Optional(StatsDate('mail sent up to and including this day; after from_date')),
})

/** `GET /transactional/stats` and `GET /transactional/stats/doi` (contract §9). */
export function transactionalStatsRoutes(app: ApiApp, ctx: AppContext): void {
  const tags = ['Transactional emails']
  const schema = {
    querystring: StatsQuery,
    response: { 200: Type.Object({ stats: MailStats }), ...commonErrors },
  }
  const description =
    'Figures as contract §5 defines them. With `from_date`/`to_date`, only mail sent on those days (UTC, both ' +
    'inclusive) counts, with everything that happened to it since.'
  app.get(
    '/transactional/stats',
    {
      schema: {
        ...schema,
        tags,
        operationId: 'getTransactionalStats',
        summary: "Statistics of the account's transactional mail",
        description,
      },
    },
    async (req) => mailStats(ctx, req.account.id, 'transactional', req.query),
  )
  app.get(
    '/transactional/stats/doi',
    {
      schema: {
        ...schema,
        tags,
        operationId: 'getDoubleOptInStats',
        summary: "Statistics of the account's double opt-in confirmation mail",
        description,
      },
    },
    async (req) => mailStats(ctx, req.account.id, 'confirmation', req.query),
  )
}
