import { campaignOrigin } from '../../src/modules/campaigns/index.js'
import {
  startSender,
  type CampaignOrigin,
  type SendOutcomes,
  type Sender,
  type SenderOptions,
} from '../../src/modules/delivery/index.js'
import { sendOutcomes } from '../../src/modules/outcomes/index.js'

export type { Sender }

/**
 * The one sender as the worker runs it (campaigns and body mail), driven by the test (`loop: false`) or
 * running its loop. `outcomes` and `campaigns` may wrap the real ones (a test making one of them fail or wait).
 */
export function startCampaignSender(
  ctx: Parameters<typeof startSender>[0],
  opts: Omit<SenderOptions, 'campaigns' | 'outcomes'> & {
    outcomes?: (real: SendOutcomes) => SendOutcomes
    campaigns?: (real: CampaignOrigin) => CampaignOrigin
  } = {},
): Sender {
  const { outcomes, campaigns, ...rest } = opts
  return startSender(ctx, {
    ...rest,
    campaigns: campaigns ? campaigns(campaignOrigin) : campaignOrigin,
    outcomes: outcomes ? outcomes(sendOutcomes) : sendOutcomes,
  })
}
