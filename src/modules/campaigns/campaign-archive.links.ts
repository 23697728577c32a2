import type { AppContext } from '../../core/context.js'
import { signToken, verifyToken } from '../../core/ids.js'

type LinkCtx = Pick<AppContext, 'config' | 'linkSecret'>

/** Its own signing purpose: a tracking or unsubscribe token can never open an archive page, nor the reverse. */
const PURPOSE = 'archive'
const ID = /^[1-9]\d{0,9}$/

/** The public web version of a campaign (`archive_url`); the signed id is the only credential. */
export function campaignArchiveUrl(ctx: LinkCtx, campaignId: number): string {
  return `${ctx.config.publicUrl}/archive/${signToken(ctx.linkSecret, PURPOSE, String(campaignId))}`
}

/** Campaign id from an archive token, or null for anything tampered or malformed. */
export function readArchiveToken(ctx: LinkCtx, token: string): number | null {
  const payload = verifyToken(ctx.linkSecret, PURPOSE, token)
  return payload && ID.test(payload) ? Number(payload) : null
}
