import type { Executor } from '../../core/db/client.js'
import { listSenders } from '../lists/index.js'
import type { CampaignRow } from './campaigns.schemas.js'

export type SenderIdentity = Pick<CampaignRow, 'fromName' | 'fromEmail' | 'replyTo'>

/**
 * The sender a campaign's mail goes out as: its own from_name, from_email and reply_to, each one it leaves
 * empty taken from its target lists (the lists in their order, then the lists of its segments: the first
 * that has the field). A field no list has stays empty: without from_email the campaign cannot be sent, and
 * without reply_to the mail has no Reply-To.
 */
export async function senderIdentity(
  ex: Executor,
  c: Pick<CampaignRow, 'accountId' | 'targets'> & SenderIdentity,
): Promise<SenderIdentity> {
  return (await resolveSender(ex, c)).sender
}

/**
 * senderIdentity, and whether any target list is left: false when the campaign leaves a field empty and every
 * list it targets was deleted (nothing could fill it). Lists are read only when a field is empty.
 */
export async function resolveSender(
  ex: Executor,
  c: Pick<CampaignRow, 'accountId' | 'targets'> & SenderIdentity,
): Promise<{ sender: SenderIdentity; listsLeft: boolean }> {
  const resolved = { fromName: c.fromName, fromEmail: c.fromEmail, replyTo: c.replyTo }
  let listsLeft = true
  if (Object.values(resolved).includes('')) {
    const order = [...new Set([...c.targets.lists, ...c.targets.segments.map((s) => s.list)])]
    const byId = new Map((await listSenders(ex, c.accountId, order)).map((l) => [l.id, l]))
    listsLeft = byId.size > 0
    for (const field of ['fromName', 'fromEmail', 'replyTo'] as const) {
      if (resolved[field] !== '') continue
      for (const id of order) {
        const value = byId.get(id)?.[field] ?? ''
        if (value !== '') {
          resolved[field] = value
          break
        }
      }
    }
  }
  return { sender: resolved, listsLeft }
}
