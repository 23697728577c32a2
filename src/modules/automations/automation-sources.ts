import type { AppContext } from '../../core/context.js'
import { pipelineById } from '../pipelines/index.js'
import type { MessageSources } from '../tracking/index.js'

/**
 * What the tracking pages and the bounce listener's mailto unsubscribe need of automation mail: an
 * unsubscribe leaves the list of the pipeline that sent it, as a campaign's leaves the campaign's lists,
 * rather than every list of the account. A pipeline is only ever soft-deleted, so its list is known after.
 * Links and web versions are the body row's (`fallback`).
 */
export function automationSources(ctx: Pick<AppContext, 'db'>, fallback: MessageSources): MessageSources {
  return {
    links: (message) => fallback.links(message),
    html: (message) => fallback.html(message),
    async lists(message) {
      if (message.pipelineId === null) return fallback.lists(message)
      const pipeline = await pipelineById(ctx.db, message.pipelineId)
      return pipeline && pipeline.accountId === message.accountId
        ? [pipeline.listId]
        : fallback.lists(message)
    },
  }
}
