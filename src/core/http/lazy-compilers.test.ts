import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildApp } from '../../app.js'
import { startTestApp } from '../../../test/helpers/app.js'
import { compileAllSchemas } from './lazy-compilers.js'

describe('route schemas compiled on first use', async () => {
  const t = await startTestApp({ worker: false })

  it('all compile: a broken one would otherwise show only at its first request', () => {
    // Every route's validators and serializers of every status (some 120 routes, over a thousand in all); none compiled by a request yet
    // but those the start-up made.
    const count = compileAllSchemas()
    assert.ok(count > 500, `only ${count}`)
    assert.equal(compileAllSchemas(), 0)
  })

  it("of an app closed and dropped are not kept: its routes' compilers go with it", async () => {
    assert.equal(compileAllSchemas(), 0, 'none pending before')
    let other: Awaited<ReturnType<typeof buildApp>> | undefined = await buildApp(t.ctx)
    await other.ready()
    await other.close()
    other = undefined
    // A WeakRef's target lives at least until the turn that made it ends; then a full collection.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    for (let i = 0; i < 3; i++) {
      await nextTurn()
      gc()
    }
    assert.equal(compileAllSchemas(), 0, 'nothing of the dropped app left to compile')
  })

  it('validate and serialize as before', async () => {
    const bad = await t.req('POST', '/lists', { body: { name: 5, double_optin: 'maybe' } })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors as object).sort(), ['double_optin'])
    const made = await t.req('POST', '/lists', { body: { name: 'L', unknown_field: 1 } })
    assert.equal(made.status, 200, made.text)
    // The response schema's serializer drops what the schema does not name, and coerces types.
    const got = await t.req('GET', `/lists/${made.body.id}`)
    assert.equal(got.status, 200)
    assert.equal(got.body.list.id, String(made.body.id))
  })
})
