import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { signToken } from '../../core/ids.js'
import { campaignBody, createList, setCampaign } from './campaigns.test-helpers.js'

const pathOf = (url: string) => new URL(url).pathname

describe('campaign archive page', async () => {
  const t = await startTestApp({ worker: false })
  const list = await createList(t, t.account)
  const create = async (html: string) => {
    const res = await t.req('POST', '/campaigns', { body: campaignBody([list], { html_text: html }) })
    assert.equal(res.status, 200, res.text)
    return res.body as { id: number; archive_url: string }
  }

  it('serves the web version as HTML, without a key, merge tags rendered for nobody', async () => {
    const c = await create(
      '<h1>Hi *|name|*!</h1><p>*|IF:name|*known*|ELSE:|*stranger*|END:IF|*</p>' +
        '<a href="*|UNSUB|*">unsubscribe</a> <a href="*|WEBVERSION|*">web</a> {*|COUPON:3|*}',
    )
    const res = await t.req('GET', pathOf(c.archive_url), { key: null })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(String(res.headers['content-security-policy']), /sandbox/)
    assert.equal(
      res.text,
      '<h1>Hi !</h1><p>stranger</p>' + `<a href="">unsubscribe</a> <a href="${c.archive_url}">web</a> `,
    )
  })

  it('serves it whatever the status, and shows edits', async () => {
    const c = await create('<p>one</p>')
    await t.req('PUT', `/campaigns/${c.id}`, { body: campaignBody([list], { html_text: '<p>two</p>' }) })
    assert.equal((await t.req('GET', pathOf(c.archive_url), { key: null })).text, '<p>two</p>')
    await setCampaign(t, c.id, { status: 3, sentAt: new Date() })
    assert.equal((await t.req('GET', pathOf(c.archive_url), { key: null })).text, '<p>two</p>')
  })

  it('answers a bare 404 for tampered, foreign, malformed tokens and deleted campaigns', async () => {
    const c = await create('<p>secret</p>')
    const token = pathOf(c.archive_url).slice('/archive/'.length)
    const [body, mac] = token.split('.') as [string, string]
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A')
    const otherId = Buffer.from(String(c.id + 1)).toString('base64url')
    const bad = [
      `${body}.${flipped}`,
      `${otherId}.${mac}`,
      signToken(t.ctx.linkSecret, 'web', String(c.id)),
      signToken('another-secret', 'archive', String(c.id)),
      signToken(t.ctx.linkSecret, 'archive', 'abc'),
      'garbage',
      '.',
    ]
    for (const tok of bad) {
      const res = await t.req('GET', `/archive/${tok}`, { key: null })
      assert.equal(res.status, 404, tok)
      assert.deepEqual(res.body, { message: 'Not Found' })
    }
    assert.deepEqual((await t.req('DELETE', `/campaigns/${c.id}`)).body, { deleted: true })
    assert.equal((await t.req('GET', pathOf(c.archive_url), { key: null })).status, 404)
  })

  it('gives every campaign its own address', async () => {
    const a = await create('<p>a</p>')
    const b = await create('<p>b</p>')
    assert.notEqual(a.archive_url, b.archive_url)
    assert.equal((await t.req('GET', pathOf(b.archive_url), { key: null })).text, '<p>b</p>')
  })
})
