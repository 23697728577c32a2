import { generateKeyPair, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'

const generateKeyPairAsync = promisify(generateKeyPair)

export interface DkimKeys {
  selector: string
  /** PKCS#8 PEM: stays in the database and the signer, never in a response or a log line. */
  privateKey: string
  /** Base64 SubjectPublicKeyInfo (DER), the `p=` of the DKIM record. */
  publicKey: string
}

/**
 * A fresh RSA-2048 key pair and its selector. Generated off the event loop: RSA key generation takes tens to
 * hundreds of milliseconds, which would stall every other request of the process if done synchronously.
 */
export async function generateDkimKeys(now: Date): Promise<DkimKeys> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
  return { selector: newSelector(now), privateKey, publicKey: publicKey.toString('base64') }
}

/**
 * `td` + year and month + 4 random hex digits (12 characters, a valid DNS label), e.g. `td2026014f3a`.
 * The date tells an operator how old a published key is; the random part lets a later key rotation publish
 * a new selector beside the old one in the same month.
 */
export function newSelector(now: Date): string {
  const month = String(now.getUTCMonth() + 1).padStart(2, '0')
  return `td${now.getUTCFullYear()}${month}${randomBytes(2).toString('hex')}`
}
