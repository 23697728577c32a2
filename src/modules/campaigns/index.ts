export { campaigns, type CampaignTargets, type CampaignStatus } from './campaigns.table.js'
export { campaignSources } from './campaign-sources.js'
export { campaignOrigin } from './campaign-origin.js'
