import type { ModuleDef } from '../registry.js'
import { startSender, type CampaignOrigin, type SendOutcomes } from './sender.js'

/**
 * Delivery: the send ledger (`messages` rows), body rows of non-campaign mail, and the one sender of every
 * kind of mail. The module list passes the campaigns' side (CampaignOrigin) and the recorders of outcomes
 * (SendOutcomes), so delivery never imports them: it sits below subscribers, which queue confirmations.
 */
export function createDeliveryModule(campaigns: CampaignOrigin, outcomes: SendOutcomes): ModuleDef {
  return {
    name: 'delivery',
    async startWorker(ctx) {
      const sender = startSender(ctx, { campaigns, outcomes })
      ctx.onClose(() => sender.stop())
    },
  }
}
