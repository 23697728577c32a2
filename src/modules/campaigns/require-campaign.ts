import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { findCampaign } from './campaigns.repo.js'
import type { CampaignRow } from './campaigns.schemas.js'

/** The account's campaign, or the contract's 404 (another account's campaign looks missing). */
export async function requireCampaign(
  ctx: Pick<AppContext, 'db'>,
  accountId: number,
  id: number,
): Promise<CampaignRow> {
  const row = await findCampaign(ctx.db, accountId, id)
  if (!row) throw notFound('Campaign not found')
  return row
}
