import type { ModuleDef } from './registry.js'
import { accountsModule } from './accounts/index.js'
import { bouncesModule } from './bounces/index.js'
import { campaignOrigin, campaignSources, campaignsModule } from './campaigns/index.js'
import { confirmationModule } from './confirmation/index.js'
import { couponsModule } from './coupons/index.js'
import { bodySources, createDeliveryModule } from './delivery/index.js'
import { domainsModule } from './domains/index.js'
import { eventsModule } from './events/index.js'
import { createListsModule } from './lists/index.js'
import { searchModule } from './search/index.js'
import { sendOutcomes } from './send-outcomes.js'
import { createSegmentService, segmentsModule } from './segments/index.js'
import { subscribersModule } from './subscribers/index.js'
import { systemModule } from './system/index.js'
import { templatesModule } from './templates/index.js'
import { createTrackingModule, storedSources } from './tracking/index.js'
import { transactionalModule } from './transactional/index.js'
import { transactionsModule } from './transactions/index.js'
import { trackerEventsModule } from './tracker-events/index.js'
import { webhooksModule } from './webhooks/index.js'

export { createAccountService, PLANS } from './accounts/index.js'
export { registerIdempotency } from './idempotency/index.js'
export type { ModuleDef } from './registry.js'

/** Every module, in registration order. */
export const modules: ModuleDef[] = [
  systemModule,
  accountsModule,
  createListsModule((ctx) => createSegmentService(ctx).all),
  subscribersModule,
  confirmationModule,
  searchModule,
  templatesModule,
  couponsModule,
  bouncesModule,
  domainsModule,
  eventsModule,
  // Tracking pages ask campaigns, then bodies, then the row itself for links, lists and web versions.
  createTrackingModule((ctx) => campaignSources(ctx, bodySources(ctx, storedSources))),
  transactionalModule,
  transactionsModule,
  trackerEventsModule,
  segmentsModule,
  campaignsModule,
  createDeliveryModule(campaignOrigin, sendOutcomes),
  webhooksModule,
]

/** Every queue any module sends to, created when the job queue starts. */
export const jobQueues: readonly string[] = modules.flatMap((m) => m.queues ?? [])
