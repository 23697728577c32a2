/**
 * `*|RECOMMEND:<recommender_id>:<n>|*` in campaign and transactional mail: each recipient's own top products as an HTML table
 * (image, title linked to the product, price) and title + URL lines in the text part, the same products the
 * API recommends to them; bestsellers for a recipient without purchases; empty for a recommender that is not
 * the account's. Feed values are escaped in HTML.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink, type SinkMessage } from '../../../test/helpers/smtp-sink.js'
import { ManualClock } from '../../core/clock.js'
import { compileTemplate } from '../../core/mail/merge-tags.js'
import { readClickToken, trackingLinks } from '../../core/mail/tracking-links.js'
import { queryRows } from '../../core/db/sql.js'
import { sql } from 'drizzle-orm'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import {
  campaignRow,
  createCampaign,
  listWith,
  sendingDomain,
} from '../campaigns/campaign-send.test-helpers.js'
import { trainDueRecommenders } from './recommender-trainer.js'
import { productsHtml, recommendTags } from './recommend-vars.js'
import { postOrders, seedFeed, type Order } from './recommenders.test-helpers.js'

const sink = await startSmtpSink()
const SHOP = 'mail.cz'

describe('recommendations in mail', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  await sendingDomain(t, t.account)
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 4 })
  t.ctx.onClose(() => sender.stop())
  const other = await t.createAccount()

  const ids = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']
  const feed = await seedFeed(t, t.account.id, [
    ...ids.map((id) => ({ id, title: `Thing ${id}` })),
    { id: 'a7', title: 'Fish & <Chips>', price: 12.5 },
  ])
  const orders: Order[] = []
  const basket = (n: number, email: string, codes: string[]) =>
    orders.push({ orderId: `m${n}`, email, shop: SHOP, at: '2026-06-01 10:00:00', codes })
  basket(1, 'ann@example.cz', ['a1', 'a2'])
  basket(2, 'bob@example.cz', ['a1', 'a3', 'a7'])
  basket(3, 'cid@example.cz', ['a2', 'a3', 'a4'])
  basket(4, 'dan@example.cz', ['a5', 'a6'])
  basket(5, 'eve@example.cz', ['a1', 'a7'])
  basket(6, 'fay@example.cz', ['a3', 'a7', 'a1'])
  await postOrders(t, t.account, orders)
  const created = await t.req('POST', '/recommenders', { body: { shop_id: SHOP, feed_id: feed } })
  const rid = created.body[0].recommender_id as string
  const otherFeed = await seedFeed(t, other.id, [{ id: 'a1' }])
  const foreign = (
    await t.req('POST', '/recommenders', { key: other.key, body: { shop_id: SHOP, feed_id: otherFeed } })
  ).body[0].recommender_id as string
  await trainDueRecommenders(t.ctx)
  assert.equal((await t.req('GET', `/recommenders/${rid}`)).body.status, 'ready')

  /**
   * The block's links: click-tracking links of the message, each carrying its product page. Product ids in the
   * order they are linked (image and title link each product: kept once), and the message they count for.
   */
  const tracked = (body: string) => {
    const refs = [...body.matchAll(/\/t\/c\/([A-Za-z0-9_.-]+)/g)].map((m) => ({
      path: `/t/c/${m[1]!}`,
      ref: readClickToken(t.ctx, m[1]!),
    }))
    const found = refs.flatMap(({ path, ref }) => {
      const id =
        ref && 'url' in ref ? /^https:\/\/shop\.example\/p\/([a-z0-9]+)$/.exec(ref.url)?.[1] : undefined
      return id && ref ? [{ id, path, messageId: ref.messageId }] : []
    })
    return found.filter((f, i) => found[i - 1]?.id !== f.id)
  }
  const linkedIds = (body: string) => tracked(body).map((f) => f.id)
  const apiIds = async (email: string, limit: number) =>
    (
      (await t.req('GET', `/recommenders/${rid}/recommendations?email=${email}&limit=${limit}`)).body
        .products as { id: string }[]
    ).map((p) => p.id)

  it('puts each recipient its own products, as the API recommends them, in HTML and text', async () => {
    sink.messages.length = 0
    const people = ['ann', 'bob', 'cid', 'dan', 'eve', 'new'].map((n) => ({
      email: `${n}@example.cz`,
      name: n,
    }))
    const list = await listWith(t, t.account, people)
    const id = await createCampaign(t, t.account, [list], {
      subject: 'For you',
      html_text:
        `<html><body><p>Hello *|name|*</p><div>*|RECOMMEND:${rid}:3|*</div>` +
        `<div id="foreign">*|RECOMMEND:${foreign}:3|*</div><p>Bye</p></body></html>`,
    })
    await t.req('POST', `/campaigns/${id}/send`)
    for (let i = 0; i < 20 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
    assert.equal(sink.messages.length, people.length)
    const byEmail = new Map<string, SinkMessage>(sink.messages.map((m) => [m.envelopeTo[0]!, m]))
    for (const p of people) {
      const m = byEmail.get(p.email)!
      const html = String(m.parsed.html)
      const expected = await apiIds(p.email, 3)
      // Dan's products were never bought with others: a history without pairs gives nothing (not bestsellers).
      assert.equal(expected.length === 0, p.email === 'dan@example.cz', p.email)
      assert.deepEqual(linkedIds(html), expected, p.email)
      assert.match(html, /<div id="foreign"><\/div>/, "another account's recommender renders empty")
      assert.ok(!html.includes('href="https://shop.example/p/'), 'no product link goes untracked')
      const text = m.parsed.text ?? ''
      assert.deepEqual(linkedIds(text), expected, `${p.email} text: ${text}`)
      const bought = new Set(orders.filter((o) => o.email === p.email).flatMap((o) => o.codes))
      assert.ok(expected.every((pid) => !bought.has(pid)))
    }
    // The new subscriber gets the bestsellers (orders holding each: a1 4, a3 3, a7 3).
    assert.deepEqual(await apiIds('new@example.cz', 3), ['a1', 'a3', 'a7'])
    const fish = String(byEmail.get('new@example.cz')!.parsed.html)
    assert.ok(fish.includes('Fish &amp; &lt;Chips&gt;'), 'feed titles are escaped')
    assert.ok(!fish.includes('<Chips>'))
    assert.ok(fish.includes('12.5'))
  })

  it("counts clicks on the block's links, and shows the block in the web version and the public page", async () => {
    sink.messages.length = 0
    const list = await listWith(t, t.account, [{ email: 'ann@example.cz', name: 'Ann' }])
    const id = await createCampaign(t, t.account, [list], {
      subject: 'Web',
      html_text: `<html><body><p><a href="https://shop.example/about">About</a></p>*|RECOMMEND:${rid}:2|*</body></html>`,
    })
    await t.req('POST', `/campaigns/${id}/send`)
    for (let i = 0; i < 20 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    const html = String(sink.messages[0]!.parsed.html)
    const links = tracked(html)
    const expected = await apiIds('ann@example.cz', 2)
    assert.equal(expected.length, 2)
    assert.deepEqual(
      links.map((l) => l.id),
      expected,
    )
    const click = await t.app.inject({ method: 'GET', url: links[1]!.path })
    assert.equal(click.statusCode, 302)
    assert.equal(click.headers.location, `https://shop.example/p/${expected[1]}`)
    const clicks = await queryRows<{ url: string }>(
      t.ctx.db,
      sql`SELECT url FROM events WHERE message_id = ${links[1]!.messageId} AND event = 'click'`,
    )
    assert.deepEqual(clicks, [{ url: `https://shop.example/p/${expected[1]}` }])
    // The campaign's own link keeps its number: the block does not move it.
    const about = /href="([^"]*\/t\/c\/[^"]+)"[^>]*>About/.exec(html)![1]!
    const aboutClick = await t.app.inject({ method: 'GET', url: about.replace(/^https?:\/\/[^/]+/, '') })
    assert.equal(aboutClick.headers.location, 'https://shop.example/about')

    // The web version: the recipient's products, tracked as in the mail.
    const web = await t.app.inject({
      method: 'GET',
      url: trackingLinks(t.ctx)
        .webVersion(links[0]!.messageId)
        .replace(/^https?:\/\/[^/]+/, ''),
    })
    assert.equal(web.statusCode, 200)
    assert.deepEqual(linkedIds(web.body), expected)
    // The public web version, for nobody in particular: the bestsellers, untracked.
    const archive = await t.app.inject({
      method: 'GET',
      url: trackingLinks(t.ctx)
        .archive(id)
        .replace(/^https?:\/\/[^/]+/, ''),
    })
    assert.equal(archive.statusCode, 200)
    const bestsellers = [...archive.body.matchAll(/href="https:\/\/shop\.example\/p\/([a-z0-9]+)"/g)].map(
      (m) => m[1]!,
    )
    assert.deepEqual(
      bestsellers.filter((b, i) => bestsellers[i - 1] !== b),
      await apiIds('nobody@example.cz', 2),
    )
  })

  it("shows a test copy's addressee their own products (a buyer) or the bestsellers (anyone else)", async () => {
    sink.messages.length = 0
    const list = await listWith(t, t.account, [{ email: 'ann@example.cz', name: 'ann' }])
    const id = await createCampaign(t, t.account, [list], {
      subject: 'Test',
      html_text: `<html><body><div>*|RECOMMEND:${rid}:2|*</div></body></html>`,
    })
    const res = await t.req('POST', `/campaigns/${id}/test`, {
      body: { emails: ['bob@example.cz', 'qa@example.cz'] },
    })
    assert.equal(res.status, 200, res.text)
    // The copies are ledger rows: the one sender sends them.
    await sender.runOnce()
    await sink.waitFor(2)
    const byEmail = new Map<string, SinkMessage>(sink.messages.map((m) => [m.envelopeTo[0]!, m]))
    for (const email of ['bob@example.cz', 'qa@example.cz']) {
      const expected = await apiIds(email, 2)
      assert.equal(expected.length, 2, email)
      assert.deepEqual(linkedIds(String(byEmail.get(email)!.parsed.html)), expected, email)
    }
  })

  it('puts them in transactional mail too, each recipient its own, the same as the API', async () => {
    sink.messages.length = 0
    const res = await t.req('POST', '/transactional/send-message', {
      body: {
        message: {
          subject: 'Thanks',
          from_name: 'Shop',
          from_email: 'orders@shop.example',
          html: `<p>Thanks</p><div>*|RECOMMEND:${rid}:2|*</div>`,
          text: `Thanks\n*|RECOMMEND:${rid}:2|*`,
          to: [{ email: 'bob@example.cz' }, { email: 'new@example.cz' }],
        },
      },
    })
    assert.equal(res.status, 200, res.text)
    // Bounded: the rows are claimed by the first round; a few more for the marks.
    for (let i = 0; i < 5 && sink.messages.length < 2; i++) await sender.runOnce()
    await sink.waitFor(2)
    const byEmail = new Map<string, SinkMessage>(sink.messages.map((m) => [m.envelopeTo[0]!, m]))
    for (const email of ['bob@example.cz', 'new@example.cz']) {
      const expected = await apiIds(email, 2)
      assert.equal(expected.length, 2, email)
      assert.deepEqual(linkedIds(String(byEmail.get(email)!.parsed.html)), expected, email)
      assert.deepEqual(linkedIds(byEmail.get(email)!.parsed.text ?? ''), expected, `${email} text`)
    }
  })

  it('reads tags with and without a count; bad ones are kept so they render empty', () => {
    const tags = recommendTags([
      '*|RECOMMEND:12:3|* {*|recommend: 7 |*}',
      '*|RECOMMEND:x|* *|RECOMMEND:5:99|*',
      null,
    ])
    assert.deepEqual(tags, [
      { name: 'recommend:12:3', recommenderId: 12, count: 3 },
      { name: 'recommend:7', recommenderId: 7, count: 4 },
      { name: 'recommend:x', recommenderId: null, count: 4 },
      { name: 'recommend:5:99', recommenderId: null, count: 99 },
    ])
  })

  it('inserts the block raw in HTML and its text in text, whatever a contact field of that name holds', () => {
    const block = productsHtml([{ title: 'T', url: 'javascript:alert(1)', image: '', price: null }])
    assert.ok(!block.includes('javascript'), 'only web links')
    const tpl = compileTemplate('<div>*|RECOMMEND:1:2|*</div><div>*|x|*</div>')
    const vars = { 'recommend:1:2': 'T\nhttps://x', 'html|recommend:1:2': '<table>ok</table>', x: '<b>' }
    assert.equal(tpl.render({ vars }, 'html'), '<div><table>ok</table></div><div>&lt;b&gt;</div>')
    assert.equal(tpl.render({ vars }, 'text'), '<div>T\nhttps://x</div><div><b></div>')
    assert.equal(tpl.render({ vars: { 'recommend:1:2': '<script>' } }, 'html'), '<div></div><div></div>')
  })
})
