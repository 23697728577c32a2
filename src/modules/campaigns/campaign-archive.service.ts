import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { compileTemplate } from '../../core/mail/merge-tags.js'
import { readMessageToken, trackingLinks } from '../tracking/index.js'
import { givenVars, providerTags } from '../delivery/index.js'
import { findCampaignById } from './campaigns.repo.js'

type Ctx = Pick<AppContext, 'db' | 'config' | 'linkSecret'>

/**
 * The campaign's HTML as nobody in particular receives it: every merge tag renders empty (no subscriber, no
 * unsubscribe link, no coupon handed out), except `*|WEBVERSION|*`, which is this page itself, and what
 * `vars` holds (product recommendations: those of nobody in particular, the bestsellers).
 */
export function renderArchiveHtml(
  html: string,
  archiveUrl: string,
  vars: Record<string, string> = {},
): string {
  return compileTemplate(html).render(
    { vars, special: (name) => (name === 'WEBVERSION' ? archiveUrl : '') },
    'html',
  )
}

/**
 * `archive_url`: the public web version. The signed token is the only credential; a tampered token and a
 * deleted campaign are the same bare 404, so a prober learns nothing.
 */
export function createCampaignArchiveService(ctx: Ctx) {
  return {
    async page(token: string): Promise<string> {
      const id = readMessageToken(ctx, 'archive', token)
      const row = id === null ? undefined : await findCampaignById(ctx.db, id)
      if (!row) throw notFound()
      // The sender's providers for nobody: no message, no address (coupons: none; recommendations: bestsellers).
      const vars = await givenVars(
        ctx,
        providerTags([row.htmlText]),
        { id: 0, accountId: row.accountId, email: '' },
        'page',
      )
      return renderArchiveHtml(row.htmlText, trackingLinks(ctx).archive(row.id), vars)
    },
  }
}
