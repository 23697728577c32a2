import type { ModuleDef } from '../registry.js'
import { FEED_REFRESH_JOB, startFeedsWorker } from './feeds.jobs.js'
import { feedRoutes } from './feeds.routes.js'

/** Product feeds (contract §8): the resource, and the worker that downloads and reads them. */
export const feedsModule: ModuleDef = {
  name: 'feeds',
  apiRoutes: feedRoutes,
  queues: [FEED_REFRESH_JOB],
  startWorker: startFeedsWorker,
}
