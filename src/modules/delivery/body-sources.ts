import type { AppContext } from '../../core/context.js'
import { compileBody, renderBodyMail, type CompiledBody } from './body-render.js'
import { bodyRecipient, bodyTemplates } from './body-content.js'
import { findBodies, findBodyMessage, type BodyRow } from './bodies.repo.js'
import { givenVars, providerTags, type GivenUse } from './vars-providers.js'

type Ctx = Pick<AppContext, 'db' | 'config' | 'linkSecret'>

/** The tracking pages' sources (tracking's MessageSources, by shape: tracking sits above this module). */
export interface BodyMessageSources<T extends { id: number; campaignId: number }, R extends T> {
  links(message: T): Promise<string[] | null>
  lists(message: T): Promise<number[] | null>
  html(message: R & { html: string | null; batchId: number | null }): Promise<string | null>
}

/** Bodies never change once written, so each process may keep the compiled ones it rendered lately. */
const BODY_CACHE_SIZE = 100

/**
 * What the tracking pages need of mail with a body row: its click targets and web version are rendered again
 * from the body and the recipient's values (the sender stores neither per message); `fallback` answers for
 * the rest (and for rows written before, which store theirs).
 */
export function bodySources<
  T extends { id: number; campaignId: number },
  R extends T & { html: string | null; batchId: number | null },
>(ctx: Ctx, fallback: BodyMessageSources<T, R>): BodyMessageSources<T, R> {
  const compiled = new Map<number, { body: BodyRow; compiled: CompiledBody }>()
  async function render(messageId: number, use: GivenUse) {
    const m = await findBodyMessage(ctx.db, messageId)
    if (!m || m.batch_id === null) return undefined
    let found = compiled.get(m.batch_id)
    if (!found) {
      const body = (await findBodies(ctx.db, [m.batch_id])).get(m.batch_id)
      if (!body) return undefined
      found = {
        body,
        // Neither links nor HTML depend on the domain: no lookup, no key.
        compiled: compileBody({
          ...body,
          bodyId: body.id,
          bounceDomain: 'invalid',
          dkim: undefined,
          publicUrl: ctx.config.publicUrl,
          linkSecret: ctx.linkSecret,
        }),
      }
      if (compiled.size >= BODY_CACHE_SIZE) compiled.delete(compiled.keys().next().value!)
      compiled.set(m.batch_id, found)
    }
    const { body } = found
    // The values the mail carried (coupon codes given when it was sent; none are handed out here).
    const given = await givenVars(
      ctx,
      providerTags(bodyTemplates(body)),
      { id: messageId, accountId: m.account_id, email: m.email },
      use,
    )
    const r = bodyRecipient(
      { ...body, trackOpens: m.track_opens, trackClicks: m.track_clicks },
      { id: messageId, email: m.email, recipientName: m.recipient_name, vars: m.vars },
      given,
    )
    return renderBodyMail(found.compiled, r)
  }
  return {
    async links(message) {
      if (message.campaignId !== 0) return fallback.links(message)
      return (await render(message.id, 'links'))?.links ?? fallback.links(message)
    },
    lists: (message) => fallback.lists(message),
    async html(message) {
      if (message.campaignId !== 0 || message.html !== null || message.batchId === null)
        return fallback.html(message)
      return (await render(message.id, 'page'))?.webHtml ?? null
    },
  }
}
