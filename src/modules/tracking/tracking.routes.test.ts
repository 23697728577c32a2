import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { and, eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { events, type EventType } from '../events/index.js'
import { findMessage, messages, type NewMessage } from '../messages/index.js'
import { pipelines } from '../pipelines/index.js'
import { trackingLinks } from './tracking.links.js'
import { signToken } from '../../core/ids.js'

const NOW = new Date('2026-03-04T05:06:07.123Z')
const TARGET = 'https://shop.example/a?x=1'
const NOT_FOUND = { message: 'Not Found' }

describe('tracking pages', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock, worker: false })
  const links = trackingLinks(t.ctx)
  /** Links in mail are absolute (PUBLIC_URL); the app is asked for their path. */
  const path = (url: string) => url.slice(t.ctx.config.publicUrl.length)

  async function newMessage(values: Partial<NewMessage> = {}) {
    const [row] = await t.ctx.db
      .insert(messages)
      .values({
        accountId: t.account.id,
        kind: 'transactional',
        email: 'jana@example.cz',
        subject: 'Hello',
        links: [TARGET],
        html: '<p>hi</p>',
        ...values,
      })
      .returning()
    return row!
  }
  const eventsOf = (messageId: number, event: EventType) =>
    t.ctx.db
      .select()
      .from(events)
      .where(and(eq(events.messageId, messageId), eq(events.event, event)))

  /** Flips one character of the MAC (the part after the dot). */
  const tamper = (url: string) =>
    url.replace(/.(\.gif)?$/, (c, gif: string | undefined) => {
      const ch = c[0] === 'A' ? 'B' : 'A'
      return ch + (gif ?? '')
    })

  it('answers the open pixel with a GIF and records every open, stamping only the first', async () => {
    const m = await newMessage()
    const res = await t.app.inject({ method: 'GET', url: path(links.open(m.id)) })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'image/gif')
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.equal(res.rawPayload.subarray(0, 6).toString('latin1'), 'GIF89a')
    // A graphic control extension with the transparency flag: the pixel never shows.
    const gce = res.rawPayload.indexOf(Buffer.from([0x21, 0xf9, 0x04]))
    assert.ok(gce > 0 && (res.rawPayload[gce + 3]! & 1) === 1)
    const opened = await eventsOf(m.id, 'open')
    assert.equal(opened.length, 1)
    assert.equal(opened[0]!.email, 'jana@example.cz')
    assert.equal(opened[0]!.accountId, t.account.id)
    assert.deepEqual((await findMessage(t.ctx.db, m.id))!.firstOpenAt, NOW)

    clock.advance(60_000)
    assert.equal((await t.req('GET', path(links.open(m.id)), { key: null })).status, 200)
    assert.equal((await eventsOf(m.id, 'open')).length, 2, 'total_open counts every open')
    assert.deepEqual((await findMessage(t.ctx.db, m.id))!.firstOpenAt, NOW, 'the first open stays first')
  })

  it('accepts the pixel token without its .gif suffix', async () => {
    const m = await newMessage()
    const res = await t.req('GET', path(links.open(m.id)).replace(/\.gif$/, ''), { key: null })
    assert.equal(res.status, 200)
    assert.equal((await eventsOf(m.id, 'open')).length, 1)
  })

  it('still redirects click links signed one per link, as mail sent before one token per message has them', async () => {
    const m = await newMessage()
    const res = await t.req('GET', `/t/c/${signToken(t.ctx.linkSecret, 'click', `${m.id}.0`)}`, { key: null })
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, TARGET)
    assert.equal((await eventsOf(m.id, 'click')).length, 1)
  })

  it('redirects a click to the stored URL only, whatever the visitor appends', async () => {
    const m = await newMessage()
    const at = clock.now()
    const res = await t.req('GET', `${path(links.click(m.id, 0))}?evil=https://x.example/&url=https://x`, {
      key: null,
    })
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, TARGET)
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
    const clicks = await eventsOf(m.id, 'click')
    assert.equal(clicks.length, 1)
    assert.equal(clicks[0]!.url, TARGET)
    assert.deepEqual((await findMessage(t.ctx.db, m.id))!.firstClickAt, at)
  })

  it('encodes a stored link that is not plain ASCII instead of failing', async () => {
    const m = await newMessage({ links: ['https://shop.example/žluté boty'] })
    const res = await t.req('GET', path(links.click(m.id, 0)), { key: null })
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, 'https://shop.example/%C5%BElut%C3%A9%20boty')
  })

  it('answers HEAD on the pixel and a click link as GET does, without counting an open or click', async () => {
    const m = await newMessage()
    const pixel = await t.app.inject({ method: 'HEAD', url: path(links.open(m.id)) })
    assert.equal(pixel.statusCode, 200)
    assert.equal(pixel.headers['content-type'], 'image/gif')
    const click = await t.app.inject({ method: 'HEAD', url: path(links.click(m.id, 0)) })
    assert.equal(click.statusCode, 302)
    assert.equal(click.headers.location, TARGET)
    assert.equal((await eventsOf(m.id, 'open')).length, 0)
    assert.equal((await eventsOf(m.id, 'click')).length, 0)
    const stamped = (await findMessage(t.ctx.db, m.id))!
    assert.equal(stamped.firstOpenAt, null)
    assert.equal(stamped.firstClickAt, null)
    // A HEAD still tells a bad link from a good one.
    const bad = await t.app.inject({ method: 'HEAD', url: tamper(path(links.open(m.id))) })
    assert.equal(bad.statusCode, 404)
  })

  it('answers the same JSON 404 for tampered, misused, out-of-range and orphaned tokens', async () => {
    const m = await newMessage()
    const gone = await newMessage()
    await t.ctx.db.delete(messages).where(eq(messages.id, gone.id))
    // A message that exists: a token swapped to it must fail on its signature, not on a missing row.
    const other = await newMessage()
    const urls = [
      tamper(links.open(m.id)),
      tamper(links.click(m.id, 0)),
      tamper(links.unsubscribe(m.id)),
      tamper(links.webVersion(m.id)),
      // A genuine token of one link kind does not open another.
      `/t/o/${links.click(m.id, 0).split('/').pop()!}`,
      `/t/c/${links
        .open(m.id)
        .split('/')
        .pop()!
        .replace(/\.gif$/, '')}`,
      `/u/${links.webVersion(m.id).split('/').pop()!}`,
      `/w/${links.unsubscribe(m.id).split('/').pop()!}`,
      links.click(m.id, 1), // the message has one link
      // A click link's signature flipped, its message swapped for another's, and without its index.
      links.click(m.id, 0).replace(/.(\.0)$/, (c, index: string) => (c[0] === 'A' ? 'B' : 'A') + index),
      links
        .click(m.id, 0)
        .replace(/\/t\/c\/[^.]+/, `/t/c/${Buffer.from(String(other.id)).toString('base64url')}`),
      links.click(m.id, 0).replace(/\.0$/, ''),
      links.open(gone.id),
      links.click(gone.id, 0),
      links.unsubscribe(gone.id),
      links.webVersion(gone.id),
      '/t/o/garbage.gif',
      '/t/c/a.b',
      '/u/x',
      '/w/.',
    ]
    for (const url of urls) {
      const res = await t.req('GET', url.startsWith('/') ? url : path(url), { key: null })
      assert.equal(res.status, 404, url)
      assert.equal(res.headers['content-type'], 'application/json', url)
      assert.deepEqual(res.body, NOT_FOUND, url)
    }
    const post = await t.req('POST', path(tamper(links.unsubscribe(m.id))), { key: null })
    assert.equal(post.status, 404)
    assert.deepEqual(post.body, NOT_FOUND)
    for (const event of ['open', 'click', 'unsub'] as const)
      assert.equal((await eventsOf(m.id, event)).length, 0)
  })

  it('shows the unsubscribe page without unsubscribing, then unsubscribes once by one-click POST', async () => {
    const { id: listId } = (await t.req('POST', '/lists', { body: { name: 'News' } })).body
    const email = 'petr@example.cz'
    const sub = await t.req('POST', `/lists/${listId}/subscribe`, {
      body: { subscriber_data: { email }, skip_confirmation: true },
    })
    assert.equal(sub.body.status, 1)
    const statusInList = async () =>
      (await t.req('GET', `/subscribers/${email}`)).body.subscriber.lists[listId].status
    const m = await newMessage({ email })
    const at = clock.now()
    const url = path(links.unsubscribe(m.id))

    const page = await t.req('GET', url, { key: null })
    assert.equal(page.status, 200)
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(page.text, /petr@example\.cz/)
    assert.match(page.text, /<form method="post">/)
    assert.match(page.text, /name="List-Unsubscribe" value="One-Click"/)
    assert.equal(await statusInList(), 1, 'opening the page (as link scanners do) changes nothing')

    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    const first = await t.req('POST', url, { key: null, headers: form, body: 'List-Unsubscribe=One-Click' })
    assert.equal(first.status, 200)
    assert.equal(first.headers.location, undefined)
    assert.equal(first.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(first.text, /unsubscribed/)
    assert.equal(await statusInList(), 2)
    assert.equal((await eventsOf(m.id, 'unsub')).length, 1)
    assert.deepEqual((await findMessage(t.ctx.db, m.id))!.unsubscribedAt, at)

    const again = await t.req('POST', url, { key: null, headers: form, body: 'List-Unsubscribe=One-Click' })
    assert.equal(again.status, 200)
    assert.equal(again.headers.location, undefined)
    assert.equal((await eventsOf(m.id, 'unsub')).length, 1, 'a repeated one-click writes no second event')
  })

  it("an automation mail's one-click leaves its pipeline's list, not the person's other lists", async () => {
    const email = 'flow.reader@example.cz'
    const flowList = (await t.req('POST', '/lists', { body: { name: 'Flow' } })).body.id
    const otherList = (await t.req('POST', '/lists', { body: { name: 'Other' } })).body.id
    for (const id of [flowList, otherList])
      await t.req('POST', `/lists/${id}/subscribe`, {
        body: { subscriber_data: { email }, skip_confirmation: true },
      })
    const [pipeline] = await t.ctx.db
      .insert(pipelines)
      .values({
        accountId: t.account.id,
        name: 'Welcome',
        listId: flowList,
        status: 'active',
        trigger: { type: 'api' },
        reentry: 'once',
        start: 'e',
        actions: [{ id: 'e', type: 'end', properties: { name: 'end' }, next: [] }],
      })
      .returning()
    const m = await newMessage({ email, kind: 'automation', pipelineId: pipeline!.id, actionId: 'm' })
    const res = await t.req('POST', path(links.unsubscribe(m.id)), {
      key: null,
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    assert.equal(res.status, 200)
    const lists = (await t.req('GET', `/subscribers/${email}`)).body.subscriber.lists
    assert.deepEqual([lists[flowList].status, lists[otherList].status], [2, 1])
  })

  it('takes a one-click POST with an empty body or as multipart/form-data', async () => {
    const bare = await newMessage({ email: 'bare@example.cz' })
    const res = await t.req('POST', path(links.unsubscribe(bare.id)), { key: null })
    assert.equal(res.status, 200)
    assert.equal((await eventsOf(bare.id, 'unsub')).length, 1)

    const multi = await newMessage({ email: 'multi@example.cz' })
    const boundary = 'XyZ'
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`
    const mres = await t.req('POST', path(links.unsubscribe(multi.id)), {
      key: null,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    })
    assert.equal(mres.status, 200)
    assert.equal((await eventsOf(multi.id, 'unsub')).length, 1)
  })

  it('escapes the address on the unsubscribe page', async () => {
    const m = await newMessage({ email: 'a&b"<x>@example.cz' })
    const page = await t.req('GET', path(links.unsubscribe(m.id)), { key: null })
    assert.match(page.text, /a&amp;b&quot;&lt;x&gt;@example\.cz/)
  })

  it('serves the stored HTML as the web version, and 404 when none is stored', async () => {
    const m = await newMessage()
    const res = await t.req('GET', path(links.webVersion(m.id)), { key: null })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(res.text, '<p>hi</p>')
    assert.match(String(res.headers['content-security-policy']), /^sandbox /)

    const bare = await newMessage({ html: null })
    const none = await t.req('GET', path(links.webVersion(bare.id)), { key: null })
    assert.equal(none.status, 404)
    assert.deepEqual(none.body, NOT_FOUND)
  })
})
