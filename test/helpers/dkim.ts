import { dkimVerify } from 'mailauth'

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
