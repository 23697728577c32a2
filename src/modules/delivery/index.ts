import type { ModuleDef } from '../registry.js'
import { startSender, type CampaignOrigin, type SendOutcomes } from './sender.js'

export { messageBatches, type BatchAttachment, type BodyKind } from './bodies.table.js'
export { copiesOfRecipient } from './bodies.repo.js'
export { BODY_DOMAIN_TYPES } from './body-content.js'
export { bodySources } from './body-sources.js'
export { queueMail, type MailBody, type MailOrigin, type MailRecipient } from './queue-mail.js'
export {
  SEND_BATCH,
  startSender,
  wakeSenders,
  type CampaignOrigin,
  type MessageRef,
  type SendOutcomes,
  type Sender,
  type SenderOptions,
} from './sender.js'
export {
  compileCampaign,
  compileLinks,
  personalLinks,
  renderCampaignHtml,
  renderCampaignMail,
  trackableHtml,
  type CampaignContent,
  type CampaignRecipient,
  type LinkTemplates,
} from './render.js'
export type { ClaimedRow, SentEvent } from './ledger.repo.js'
export { createMailSigner, type MailSigner } from './signer.js'
export { varsProviders, type VarsProvider } from './vars-providers.js'

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
