import { createHash } from 'node:crypto'
import type { DkimKey } from '../../core/mail/mailer.js'
import type { BodyAttachment, BodyContent } from './body-render.js'

/**
 * A content as contentKey reads it: every field goes into the key, the DKIM key and attachments in a short form;
 * the instance's link secret, which every content carries, keeps two databases' keys apart.
 */
interface KeyedContent {
  dkim: DkimKey | undefined
  attachments?: BodyAttachment[]
  linkSecret: string
}

/** DKIM private keys by a short fingerprint: the same few PEMs, content after content. */
const fingerprints = new Map<string, string>()
const FINGERPRINTS_MAX = 100

function fingerprint(pem: string): string {
  let f = fingerprints.get(pem)
  if (f === undefined) {
    f = createHash('sha1').update(pem).digest('base64url')
    if (fingerprints.size >= FINGERPRINTS_MAX) fingerprints.delete(fingerprints.keys().next().value!)
    fingerprints.set(pem, f)
  }
  return f
}

/**
 * The key under which signing threads keep a content compiled (sign.worker.ts): contents that render alike
 * share it, any difference gives another. The instance's link secret is part of every content, so two databases
 * in one process (tests) never share a key. A hash of the content as JSON, with the DKIM private key by its
 * fingerprint: for a small transactional mail its 1.7 KB were most of what was serialised and hashed, once a
 * message, about 1 % of the machine while a queue of them drained (profiled, issue 11). Attachments go in by
 * name, type and size only: their base64, megabytes perhaps, would be serialised and hashed at every claim.
 * Their bytes are told apart by the body row instead (bodyContentKey).
 */
export function contentKey(prefix: string, content: KeyedContent): string {
  const { dkim, attachments, ...rest } = content
  const json = JSON.stringify([
    rest,
    dkim ? [dkim.domainName, dkim.keySelector, fingerprint(dkim.privateKey)] : null,
    attachments?.map((a) => [a.name, a.type, a.content.length]) ?? null,
  ])
  return `${prefix}:${createHash('sha1').update(json).digest('base64url')}`
}

/**
 * A body's key: by what renders, not by its row, so a shop's calls of one template share one compiled copy;
 * mail with attachments by its row too (contentKey leaves their bytes out; calls that share them are rare).
 */
export function bodyContentKey(content: BodyContent): string {
  return contentKey('b', content.attachments.length ? content : { ...content, bodyId: 0 })
}
