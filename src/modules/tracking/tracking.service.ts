import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { createEventRecorder } from '../outcomes/index.js'
import { findMessage, findTrackedMessage } from '../messages/index.js'
import type { MessageSources } from './tracking.sources.js'
import { readClickToken, readMessageToken } from './tracking.links.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'linkSecret'>

/**
 * The pages behind links in mail. The signed token is the only credential; anything wrong with it (tampered,
 * another link kind's token, a message since erased) is the same bare 404, so a prober learns nothing.
 * Opens and clicks are hot paths: a token check in memory, then the recorder's one transaction.
 */
export function createTrackingService(ctx: Ctx, sources: MessageSources) {
  const recorder = createEventRecorder(ctx)

  /** The message a token names, through `find` (narrow for most pages; the web version needs the body). */
  async function messageOf<T>(
    purpose: string,
    token: string,
    find: (id: number) => Promise<T | undefined>,
  ): Promise<T> {
    const id = readMessageToken(ctx, purpose, token)
    const message = id === null ? undefined : await find(id)
    if (!message) throw notFound()
    return message
  }

  return {
    /**
     * Records an open (unless `record` is false: a HEAD request only checks the link); the pixel URL ends in
     * `.gif` so mail clients treat it as an image.
     */
    async open(token: string, record = true): Promise<void> {
      const id = readMessageToken(ctx, 'open', token.replace(/\.gif$/i, ''))
      if (id === null || !(await recorder.opened(id, record))) throw notFound()
    },

    /** The stored target of the link after recording the click; nothing from the request can change it. */
    async click(token: string, record = true): Promise<string> {
      const ref = readClickToken(ctx, token)
      const url = !ref
        ? undefined
        : 'url' in ref
          ? await recorder.clickedTarget(ref.messageId, ref.url, record)
          : await recorder.clicked(ref.messageId, ref.index, sources.links, record)
      // Stored links are http(s) by construction (compose-message); checked again so no row can ever turn
      // this page into a javascript: or data: redirect.
      if (!url || !/^https?:\/\//i.test(url)) throw notFound()
      return url
    },

    /** The address an unsubscribe link stands for, for its confirmation page. */
    async unsubscribeTarget(token: string): Promise<{ email: string }> {
      const message = await messageOf('unsub', token, (id) => findTrackedMessage(ctx.dbHandle, id))
      return { email: message.email }
    },

    /** RFC 8058 one-click (and the page's button); repeating it changes nothing and writes no second event. */
    async unsubscribe(token: string): Promise<void> {
      const id = readMessageToken(ctx, 'unsub', token)
      if (id === null || !(await recorder.unsubscribed(id, sources.lists))) throw notFound()
    },

    async webVersion(token: string): Promise<string> {
      const html = await sources.html(await messageOf('web', token, (id) => findMessage(ctx.db, id)))
      if (html === null) throw notFound()
      return html
    },
  }
}
