import { campaignOrigin } from '../../src/modules/campaigns/index.js'
import { startSender, type Sender, type SenderOptions } from '../../src/modules/delivery/index.js'
import { sendOutcomes } from '../../src/modules/outcomes/index.js'

export type { Sender }

/** The one sender as the worker runs it (campaigns and body mail), driven by the test (`loop: false`). */
export function startCampaignSender(
  ctx: Parameters<typeof startSender>[0],
  opts: Omit<SenderOptions, 'campaigns' | 'outcomes'> = {},
): Sender {
  return startSender(ctx, { ...opts, campaigns: campaignOrigin, outcomes: sendOutcomes })
}
