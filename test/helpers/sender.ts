import { campaignOrigin } from '../../src/modules/campaigns/index.js'
import {
  startSender,
  type SendOutcomes,
  type Sender,
  type SenderOptions,
} from '../../src/modules/delivery/index.js'
import { sendOutcomes } from '../../src/modules/outcomes/index.js'

export type { Sender }

/**
 * The one sender as the worker runs it (campaigns and body mail), driven by the test (`loop: false`).
 * `outcomes` may wrap the real ones (a test making one of them fail).
 */
export function startCampaignSender(
  ctx: Parameters<typeof startSender>[0],
  opts: Omit<SenderOptions, 'campaigns' | 'outcomes'> & {
    outcomes?: (real: SendOutcomes) => SendOutcomes
  } = {},
): Sender {
  const { outcomes, ...rest } = opts
  return startSender(ctx, {
    ...rest,
    campaigns: campaignOrigin,
    outcomes: outcomes ? outcomes(sendOutcomes) : sendOutcomes,
  })
}
