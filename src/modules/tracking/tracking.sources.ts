import type { MessageRow, TrackedMessage } from '../messages/index.js'

/**
 * Where the tracking pages find what a message row may not hold itself. Transactional messages store their
 * click targets and HTML on the row; campaign mail will keep links and HTML once per campaign and its lists
 * on the campaign, so the campaigns module supplies its own sources (wired in tracking/index.ts) instead of
 * the tracking pages learning about campaigns.
 */
export interface MessageSources {
  /** Click targets by index, asked only when the row stores none. */
  links(message: TrackedMessage): Promise<string[] | null>
  /** Lists a one-click unsubscribe leaves; null leaves every list of the account. */
  lists(message: TrackedMessage): Promise<number[] | null>
  /** The web version; null answers 404. */
  html(message: MessageRow): Promise<string | null>
}

/** What the message row itself holds; until campaigns plug in, an unsubscribe leaves every list. */
export const storedSources: MessageSources = {
  links: async () => null,
  lists: async () => null,
  html: async (message) => message.html,
}
