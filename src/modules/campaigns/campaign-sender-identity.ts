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
  const resolved = { fromName: c.fromName, fromEmail: c.fromEmail, replyTo: c.replyTo }
  if (Object.values(resolved).includes('')) {
    const order = targetListIds(c)
    const byId = new Map((await listSenders(ex, c.accountId, order)).map((l) => [l.id, l]))
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
  return resolved
}

/** The lists a campaign targets, itself or through its segments, in the order given, each once. */
const targetListIds = (c: Pick<CampaignRow, 'targets'>) => [
  ...new Set([...c.targets.lists, ...c.targets.segments.map((s) => s.list)]),
]

/** Whether any list the campaign targets still exists (a deleted one is gone from the account's lists). */
export async function anyTargetList(
  ex: Executor,
  c: Pick<CampaignRow, 'accountId' | 'targets'>,
): Promise<boolean> {
  return (await listSenders(ex, c.accountId, targetListIds(c))).length > 0
}
