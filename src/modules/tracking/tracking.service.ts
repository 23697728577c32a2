import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { createEventRecorder } from '../outcomes/index.js'
import { findUnsubscribePage } from '../lists/index.js'
import { findMessage, findTrackedMessage, type TrackedMessage } from '../messages/index.js'
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

  /**
   * Where the unsubscribe page's own button sends the person once done (api.md: the list's `unsub_page`,
   * "redirect after unsubscribing"): the first list the link leaves that has one; null when none does (mail
   * of no list, such as transactional, leaves every list and has none).
   */
  const unsubscribePage = (message: TrackedMessage, lists: number[] | null): Promise<string | null> =>
    lists ? findUnsubscribePage(ctx.db, message.accountId, lists, message.email) : Promise.resolve(null)

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

    /** The address an unsubscribe link stands for, for its page, and where the page's button leads after. */
    async unsubscribeTarget(token: string): Promise<{ email: string; page: string | null }> {
      const message = await messageOf('unsub', token, (id) => findTrackedMessage(ctx.dbHandle, id))
      return { email: message.email, page: await unsubscribePage(message, await sources.lists(message)) }
    },

    /**
     * RFC 8058 one-click (and the page's button); repeating it changes nothing and writes no second event.
     * `fromPage`: the person pressed the page's button, and is told where to go next (unsubscribePage).
     */
    async unsubscribe(token: string, fromPage = false): Promise<{ page: string | null }> {
      const id = readMessageToken(ctx, 'unsub', token)
      // The message and lists the recorder looked up, kept for the page rather than looked up again.
      let left: { message: TrackedMessage; lists: number[] | null } | undefined
      const listsOf = async (message: TrackedMessage) => {
        left = { message, lists: await sources.lists(message) }
        return left.lists
      }
      if (id === null || !(await recorder.unsubscribed(id, listsOf))) throw notFound()
      return { page: fromPage && left ? await unsubscribePage(left.message, left.lists) : null }
    },

    async webVersion(token: string): Promise<string> {
      const html = await sources.html(await messageOf('web', token, (id) => findMessage(ctx.db, id)))
      if (html === null) throw notFound()
      return html
    },
  }
}
