import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { insertDomain } from './domains.repo.js'

describe('domains repo', async () => {
  const t = await startTestApp()

  it('keeps the private key out of the error of a failed insert', async () => {
    const secret = '-----BEGIN PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n'
    const values = {
      name: 'fails.example',
      type: 'sending' as const,
      dkimSelector: 'td2026010000',
      dkimPrivateKey: secret,
      dkimPublicKey: 'AAAA',
    }
    // No such account: the foreign key refuses the row.
    const err = await insertDomain(t.ctx.db, 2_000_000_000, values).then(
      () => assert.fail('the insert should fail'),
      (e: unknown) => e,
    )
    const seen = new Set<unknown>()
    for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as Error).cause) {
      seen.add(e)
      const text = `${String((e as Error).message)} ${JSON.stringify(e)}`
      assert.equal(text.includes('SECRET-KEY-MATERIAL'), false, text)
    }
    assert.equal((err as { code?: string }).code, '23503')
  })
})
