export { messageBatches, type BatchAttachment, type BatchCopies, type BodyKind } from './bodies.table.js'
export { copiesOfRecipient, pseudonymiseCopies } from './bodies.repo.js'
export { BODY_DOMAIN_TYPES, CAMPAIGN_DOMAIN_TYPES } from './body-content.js'
export { bodySources } from './body-sources.js'
export {
  queueMail,
  queueMails,
  type MailBody,
  type MailOrigin,
  type MailRecipient,
  type QueuedMail,
} from './queue-mail.js'
export {
  MAIL_QUEUED_CHANNEL,
  SEND_BATCH,
  startSender,
  wakeSenders,
  type CampaignOrigin,
  type MessageRef,
  type PreparingHelp,
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
  renderCampaignSubject,
  trackableHtml,
  type CampaignContent,
  type CampaignRecipient,
  type LinkTemplates,
} from './render.js'
export type { ClaimedRow, SentEvent } from './ledger.repo.js'
export { createMailSigner, type MailSigner } from './signer.js'
export {
  givenVars,
  providerTags,
  varsProviders,
  type GivenMessage,
  type VarsProvider,
} from './vars-providers.js'
