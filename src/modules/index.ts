import type { AppContext } from '../core/context.js'
import type { ModuleDef } from './registry.js'
import { accountsModule } from './accounts/accounts.module.js'
import { createBouncesModule } from './bounces/bounces.module.js'
import { campaignOrigin, campaignSources } from './campaigns/index.js'
import { campaignsModule } from './campaigns/campaigns.module.js'
import { confirmationModule } from './confirmation/confirmation.module.js'
import { bodySources, pseudonymiseCopies } from './delivery/index.js'
import { createDeliveryModule } from './delivery/delivery.module.js'
import { sendOutcomes } from './outcomes/index.js'
import { storedSources, type MessageSources } from './tracking/index.js'
import { couponsModule } from './coupons/coupons.module.js'
import { domainsModule } from './domains/domains.module.js'
import { createListsModule } from './lists/lists.module.js'
import { searchModule } from './search/search.module.js'
import { createSegmentService } from './segments/index.js'
import { segmentsModule } from './segments/segments.module.js'
import { createSubscribersModule } from './subscribers/subscribers.module.js'
import { systemModule } from './system/system.module.js'
import { templatesModule } from './templates/templates.module.js'
import { createTrackingModule } from './tracking/tracking.module.js'
import { transactionalModule } from './transactional/transactional.module.js'
import { transactionsModule } from './transactions/transactions.module.js'
import { trackerEventsModule } from './tracker-events/tracker-events.module.js'
import { webhooksModule } from './webhooks/webhooks.module.js'
import { pipelinesModule } from './pipelines/pipelines.module.js'
import { automationSources, eraseAutomationRuns } from './automations/index.js'
import { automationsModule } from './automations/automations.module.js'
import { feedsModule } from './feeds/feeds.module.js'
import { recommendersModule } from './recommenders/recommenders.module.js'

export { createAccountService, PLANS } from './accounts/index.js'
export { registerIdempotency } from './idempotency/index.js'
export type { ModuleDef } from './registry.js'

/**
 * Where a message's links, lists and web version are found: campaigns, then automations, then bodies, then the
 * row itself. The tracking pages read all three; the bounce listener's mailto unsubscribe the lists, so that
 * both ways of unsubscribing from one mail leave the same lists.
 */
export const messageSources = (ctx: AppContext): MessageSources =>
  campaignSources(ctx, automationSources(ctx, bodySources(ctx, storedSources)))

/**
 * Every module, in registration order: each one's `<group>.module.ts` (routes, queues, worker), which only
 * this file imports; modules reach each other through their `index.ts`, which holds no routes.
 */
export const modules: ModuleDef[] = [
  systemModule,
  accountsModule,
  createListsModule((ctx) => createSegmentService(ctx).all),
  // A GDPR erasure also pseudonymises the address in the automation runs and log (and stops the runs), and in
  // the cc and bcc copies of bodies.
  createSubscribersModule([
    eraseAutomationRuns,
    (tx, e) => pseudonymiseCopies(tx, e.accountId, e.email, e.pseudonym),
  ]),
  confirmationModule,
  searchModule,
  templatesModule,
  couponsModule,
  createBouncesModule((ctx) => messageSources(ctx).lists),
  domainsModule,
  createTrackingModule(messageSources),
  transactionalModule,
  transactionsModule,
  trackerEventsModule,
  segmentsModule,
  campaignsModule,
  createDeliveryModule(campaignOrigin, sendOutcomes),
  webhooksModule,
  pipelinesModule,
  feedsModule,
  recommendersModule,
  automationsModule,
]

/** Every queue any module sends to, created when the job queue starts. */
export const jobQueues: readonly string[] = modules.flatMap((m) => m.queues ?? [])

/**
 * Starts the job queue with every module's queues, by a service at start and by `tidings migrate`. pg-boss
 * creates its schema on a first start; processes starting together must not race it (23505).
 */
export const startJobQueue = (ctx: Pick<AppContext, 'dbHandle' | 'jobs'>) =>
  ctx.dbHandle.underMigrationLock(() => ctx.jobs.start(jobQueues))
