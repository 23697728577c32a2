import type { CampaignStatus } from './campaigns.table.js'

/** Contract §4: why a campaign ended errored (status 4). */
export const CAMPAIGN_ERROR_CODES = [
  'no_sending_domain',
  'no_from_email',
  'relay_refused_all',
  'cancelled',
  'internal',
] as const
export type CampaignErrorCode = (typeof CAMPAIGN_ERROR_CODES)[number]

export interface CampaignError {
  code: CampaignErrorCode
  /** One sentence a person can act on. */
  message: string
}

/** Every way a campaign ends in status 4, with the words its owner reads in `error.message`. */
export const campaignErrors = {
  noFromEmail: (): CampaignError => ({
    code: 'no_from_email',
    message:
      'Neither the campaign nor its target lists have a from_email: give its lists one, then resume the campaign.',
  }),
  /** The same, where no target list is left to give one: the advice above cannot be followed. */
  noFromEmailListsGone: (): CampaignError => ({
    code: 'no_from_email',
    message:
      'The campaign has no from_email and its target lists, which would give it one, were deleted: create the campaign again with a from_email and existing lists.',
  }),
  noSendingDomain: (domain: string): CampaignError => ({
    code: 'no_sending_domain',
    message: `The sending domain ${domain} is not verified: add it with POST /domains, publish its DNS records and verify it, then resume the campaign.`,
  }),
  domainLost: (domain: string): CampaignError => ({
    code: 'no_sending_domain',
    message: `The sending domain ${domain} is no longer verified: fix its DNS records and verify it again, then resume the campaign.`,
  }),
  relayRefusedAll: (lastAnswer: string): CampaignError => ({
    code: 'relay_refused_all',
    message: `The SMTP relay refused every message (last answer: ${lastAnswer.slice(0, 300)}): check the relay named by SMTP_URL and its logs.`,
  }),
  cancelled: (): CampaignError => ({
    code: 'cancelled',
    message: 'The campaign was cancelled: its unsent messages will not go out.',
  }),
  internal: (): CampaignError => ({
    code: 'internal',
    message:
      'Sending stopped on an unexpected error: the server log has the details; resume the campaign once it is fixed.',
  }),
}

/**
 * The `error` field of a campaign: null unless it is errored. A row errored before codes were stored has
 * only its old text, shown as an `internal` error.
 */
export function campaignErrorOf(row: {
  status: CampaignStatus
  errorCode: string | null
  error: string | null
}): CampaignError | null {
  if (row.status !== 4) return null
  const code = (CAMPAIGN_ERROR_CODES as readonly string[]).includes(row.errorCode ?? '')
    ? (row.errorCode as CampaignErrorCode)
    : 'internal'
  return { code, message: row.error || campaignErrors.internal().message }
}
