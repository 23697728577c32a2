import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BodyContent } from './body-render.js'
import { bodyContentKey, contentKey } from './content-key.js'

const body = (over: Partial<BodyContent> = {}): BodyContent => ({
  bodyId: 1,
  subject: 'Order *|order|*',
  fromName: 'Shop',
  fromEmail: 'orders@shop.example',
  replyTo: null,
  html: '<p>Hello *|name|*</p>',
  text: null,
  ampHtml: null,
  attachments: [],
  marketing: false,
  bounceDomain: 'shop.example',
  dkim: { domainName: 'shop.example', keySelector: 'tidings', privateKey: 'PEM one' },
  publicUrl: 'https://mail.shop.example',
  linkSecret: 'secret of one instance',
  ...over,
})
const pdf = (content: string) => [{ name: 'invoice.pdf', type: 'application/pdf', content }]

describe('content keys of compiled mail', () => {
  it('give bodies that render alike one key, whatever their rows', () => {
    assert.equal(bodyContentKey(body({ bodyId: 1 })), bodyContentKey(body({ bodyId: 2 })))
  })

  it('tell apart every difference that renders, the DKIM key and the instance included', () => {
    const keys = [
      body(),
      body({ html: '<p>Hi *|name|*</p>' }),
      body({ subject: 'Order' }),
      body({ text: 'Hello' }),
      body({ marketing: true }),
      body({ dkim: undefined }),
      body({ dkim: { domainName: 'shop.example', keySelector: 'tidings', privateKey: 'PEM two' } }),
      body({ dkim: { domainName: 'shop.example', keySelector: 'other', privateKey: 'PEM one' } }),
      body({ linkSecret: 'secret of another instance' }),
      body({ attachments: pdf('QUJD') }),
    ].map(bodyContentKey)
    assert.equal(new Set(keys).size, keys.length)
  })

  it('key mail with attachments by its row: their bytes are not read, so two rows never share one', () => {
    const a = bodyContentKey(body({ bodyId: 7, attachments: pdf('QUJD') }))
    assert.notEqual(a, bodyContentKey(body({ bodyId: 8, attachments: pdf('REVG') })))
    assert.notEqual(a, bodyContentKey(body({ bodyId: 8, attachments: pdf('QUJD') })))
    assert.notEqual(a, bodyContentKey(body({ bodyId: 7, attachments: pdf('QUJDRA==') })))
    assert.equal(a, bodyContentKey(body({ bodyId: 7, attachments: pdf('QUJD') })))
  })

  it('keep the prefix apart: a campaign and a test copy of it', () => {
    const content = { ...body(), bodyId: 0 }
    assert.notEqual(contentKey('3', content), contentKey('b3', content))
    assert.match(contentKey('3', content), /^3:[\w-]{27}$/)
  })
})
