import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { simpleParser } from 'mailparser'
import { dkimResults, testDkimKey } from '../../../test/helpers/dkim.js'
import { buildRawMessage } from '../../core/mail/raw-message.js'
import { trackingLinks, withOpenPixel } from '../../core/mail/tracking-links.js'
import { compileCampaign, renderCampaignHtml, renderCampaignMail, type CampaignContent } from './render.js'
import { htmlToTextPart } from '../../core/mail/text-part.js'
import { compileBody, renderBodyMail, type BodyContent, type BodyRecipient } from './body-render.js'

const { dkim, published } = testDkimKey()

// Merge tags in text, in an IF block around a link, non-ASCII, runs of spaces and tabs, a long unbroken line:
// what the pieces of a campaign's mail meet. (CSS inlining serialises the document again, with one `</body>`.)
const HTML =
  '<html><head><style>p{color:#333}</style></head><body>\n' +
  '<h1>Ahoj  *|name|*,\t*|surname|*</h1>\n' +
  `<p>${'Jarní kolekce, novinky a nabídky vybrané pro vás. '.repeat(6)}</p>\n` +
  '*|IF:vip|*<p><a href="https://shop.example/vip?x=1&amp;y=2">VIP</a></p>*|ELSE:|*<p>Pro všechny</p>*|END:IF|*' +
  '<p><a href="https://shop.example/p/1">Produkt 1</a> a <a href="https://shop.example/p/2">2</a></p>' +
  '<p>{*|note|*} *|city|*</p><p><a href="*|UNSUB|*">Odhlásit</a></p></body></html>'

const content: CampaignContent = {
  campaignId: 3,
  subject: 'Pro vás, *|name|*',
  fromName: 'Obchod',
  fromEmail: 'news@shop.example',
  replyTo: '',
  html: HTML,
  plainText: null,
  bounceDomain: 'shop.example',
  dkim,
  publicUrl: 'https://mail.shop.example',
  linkSecret: 'secret-of-the-instance-0123456789',
}

const recipients = [
  { name: 'Jana', surname: 'Nováková', vip: '1', city: 'Brno  sever', note: '<b>raw</b>' },
  { name: 'Petr =', surname: '', vip: '', city: '', note: '' },
  { name: 'A'.repeat(120), surname: 'tab\there', vip: 'yes', city: 'Praha ', note: '  ' },
].map((vars, i) => ({ messageId: 500 + i, email: `r${i}@example.cz`, name: vars.name, vars }))

describe('campaign mail in pieces', () => {
  it('reads as the whole rendering would: HTML with the pixel and tracked links, text, a valid signature', async () => {
    const c = compileCampaign(content)
    const links = trackingLinks({ config: { publicUrl: content.publicUrl }, linkSecret: content.linkSecret })
    for (const r of recipients) {
      const raw = buildRawMessage(renderCampaignMail(c, r), 'shop.example').raw
      const parsed = await simpleParser(raw)
      // The HTML as a whole rendering gives it (links tracked), with the pixel before `</body>`.
      assert.equal(parsed.html, withOpenPixel(renderCampaignHtml(c, r), links.open(r.messageId)))
      assert.match(String(parsed.html), /<img src="https:\/\/mail\.shop\.example\/t\/o\/[^"]+"[^>]*><\/body>/)
      // The text part: the template's text with values and tracked links, as a whole rendering gives it.
      const text = c.text
        .render(
          { vars: r.vars, special: (n) => (n === 'UNSUB' ? links.unsubscribe(r.messageId) : undefined) },
          'text',
        )
        .replace(/https:\/\/tidings-click\.invalid\/(\d+)/g, (_, i: string) =>
          links.click(r.messageId, Number(i)),
        )
      assert.equal(parsed.text?.replace(/\r\n/g, '\n'), text.replace(/\r\n/g, '\n'))
      assert.match(text, new RegExp(links.click(r.messageId, 1).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
      // Lines of at most 76, and a signature an independent verifier passes.
      for (const line of raw.slice(raw.indexOf('\r\n\r\n')).split('\r\n')) assert.ok(line.length <= 76, line)
      assert.deepEqual(
        (await dkimResults(raw, published)).map((x) => x.status.result),
        ['pass'],
      )
    }
  })
})

describe('body mail: the text part made from the HTML', () => {
  const body = (html: string): BodyContent => ({
    bodyId: 9,
    subject: 'Order *|order|*',
    fromName: 'Shop',
    fromEmail: 'orders@shop.example',
    replyTo: null,
    ampHtml: null,
    html,
    text: null,
    attachments: [],
    marketing: false,
    bounceDomain: 'shop.example',
    dkim: undefined,
    publicUrl: 'https://mail.shop.example',
    linkSecret: 'secret-of-the-instance-0123456789',
  })
  const recipient = (i: number, vars: Record<string, string>, trackClicks = true): BodyRecipient => ({
    messageId: 700 + i,
    email: `b${i}@example.cz`,
    name: '',
    vars,
    cc: [],
    bcc: [],
    trackOpens: true,
    trackClicks,
  })
  const values = [
    { name: 'Jana', order: 'A-1', url: 'https://shop.example/a' },
    { name: '<b>&amp; "x"</b>', order: '', url: 'https://shop.example/b' },
    { name: 'line\nbreak  and   runs', order: 'x'.repeat(90), url: '' },
  ]
  const words = (s: string | undefined) => String(s).replace(/\s+/g, ' ').trim()

  it('is made once per body and reads as each message converted on its own would', () => {
    const html =
      '<html><body><h1>Hello *|name|*,</h1>' +
      `<p>${'your order *|order|* ships today, and here is what happens next. '.repeat(4)}</p>` +
      '<p><a href="https://shop.example/track?o=1&amp;p=2">Track it</a> or ' +
      '<a href="https://shop.example/help">https://shop.example/help</a> *|WEBVERSION|*</p></body></html>'
    const c = compileBody(body(html))
    assert.ok(c.textFromHtml, 'plain value tags only: the text is made once')
    values.forEach((vars, i) => {
      for (const tracked of [true, false]) {
        const { mail, webHtml } = renderBodyMail(c, recipient(i, vars, tracked))
        assert.equal(words(mail.text), words(htmlToTextPart(webHtml!)))
        assert.equal(/\/t\/c\//.test(String(mail.text)), tracked)
      }
    })
    assert.ok(c.textFromHtml.tracked && c.textFromHtml.plain)
  })

  it('is made per message where values can change the HTML: raw values, IF blocks, tags in links', () => {
    for (const html of [
      '<p>Hello {*|name|*}</p>',
      '<p>*|IF:order|*Order *|order|**|END:IF|* <a href="https://shop.example/">Shop</a></p>',
      '<p><a href="*|url|*">Your link</a> *|name|*</p>',
      '<p>Hello *|first name|*</p>',
      '<p>For you: *|RECOMMEND:1:3|*</p>',
    ]) {
      const c = compileBody(body(html))
      assert.equal(c.textFromHtml, undefined, html)
      values.forEach((vars, i) => {
        const { mail, webHtml } = renderBodyMail(c, recipient(i, { ...vars, 'first name': 'F' }))
        assert.equal(mail.text, htmlToTextPart(webHtml!))
      })
    }
  })
})
