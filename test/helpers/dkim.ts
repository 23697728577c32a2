import { generateKeyPairSync } from 'node:crypto'
import { dkimVerify } from 'mailauth'
import type { DkimKey } from '../../src/core/mail/mailer.js'

export interface PublishedKey {
  name: string
  selector: string
  /** Base64 SubjectPublicKeyInfo, as the DKIM TXT record publishes it. */
  publicKey: string
}

/** DKIM verification against one published key; no network: the resolver knows that one record. */
export async function dkimResults(raw: string, d: PublishedKey) {
  const host = `${d.selector}._domainkey.${d.name}`
  const resolver = async (name: string, type: string) => {
    if (name === host && type === 'TXT') return [[`v=DKIM1; k=rsa; p=${d.publicKey}`]]
    throw Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' })
  }
  const { results } = await dkimVerify(raw, { resolver })
  return results
}

/**
 * A fresh RSA-2048 signing key for `shop.example` (selector `td1`) and its published record, for tests that
 * sign mail without a domains row.
 */
export function testDkimKey(): { dkim: DkimKey; published: PublishedKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    dkim: {
      domainName: 'shop.example',
      keySelector: 'td1',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
    published: {
      name: 'shop.example',
      selector: 'td1',
      publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    },
  }
}
