import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

/** A path id is decimal digits; other spellings of a number name no record. */
describe('path ids', async () => {
  const t = await startTestApp({ worker: false })
  const id = (await t.req('POST', '/lists', { body: { name: 'Shop' } })).body.id as number

  it('in decimal, with or without leading zeros, name the record', async () => {
    for (const path of [`/lists/${id}`, `/lists/00${id}`]) {
      const res = await t.req('GET', path)
      assert.equal(res.status, 200, `${path}: ${res.text}`)
      assert.equal(Number(res.body.list.id), id)
    }
  })

  it('in hex, with an exponent, a sign, a space or a fraction: 404, and nothing written', async () => {
    const spellings = [`0x${id.toString(16)}`, `${id}e0`, `+${id}`, `%20${id}`, `${id}%20`, `${id}.0`]
    for (const s of spellings) {
      const got = await t.req('GET', `/lists/${s}`)
      assert.equal(got.status, 404, `GET ${s}: ${got.text}`)
      assert.deepEqual(got.body, { message: 'Not Found' })
      const put = await t.req('PUT', `/lists/${s}`, { body: { name: `renamed ${s}` } })
      assert.equal(put.status, 404, `PUT ${s}: ${put.text}`)
    }
    assert.equal((await t.req('GET', `/lists/${id}`)).body.list.name, 'Shop')
  })

  it('a string path parameter is not held to digits', async () => {
    await t.req('POST', `/lists/${id}/subscribe`, {
      body: { subscriber_data: { email: '1e0@shop.example' } },
    })
    const res = await t.req('GET', `/lists/${id}/subscriber/1e0@shop.example`)
    assert.equal(res.status, 200, res.text)
  })
})
