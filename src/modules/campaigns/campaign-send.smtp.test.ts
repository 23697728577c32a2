import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { dkimResults } from '../../../test/helpers/dkim.js'
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryRows } from '../../core/db/sql.js'
import { batchState, type TestDomain } from '../transactional/transactional.test-helpers.js'
import {
  CAMPAIGN_HTML,
  createCampaign,
  ledger,
  listWith,
  sendingDomain,
  waitForStatus,
} from './campaign-send.test-helpers.js'

const html = (m: SinkMessage) => (typeof m.parsed.html === 'string' ? m.parsed.html : '')
/** A header from the raw message, unfolded (mailparser turns List-* headers into objects). */
const header = (m: SinkMessage, name: string) =>
  new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(m.raw.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? ''
const linksIn = (m: SinkMessage, pattern: RegExp) => [...html(m).matchAll(pattern)].map((x) => x[0])

// At file level, so it closes after the app (the app's pooled connections would hold it open otherwise).
const sink: SmtpSink = await startSmtpSink()

describe('campaign sent over SMTP by the worker', async () => {
  // One signing thread: the path production takes, in a test.
  const t: TestApp = await startTestApp({ config: { smtpUrl: sink.url, sendThreads: 1 } })
  const domain: TestDomain = await sendingDomain(t, t.account)
  const listA = await listWith(t, t.account, [
    { email: 'anna@example.cz', name: 'Anna', city: 'Praha', vokativ: 'Anno' },
    { email: 'both@example.cz', name: 'Bob', city: 'Brno' },
    { email: 'gone@example.cz', name: 'Gone', status: 2 },
    { email: 'bounced@example.cz', name: 'Hard' },
    { email: 'unconfirmed@example.cz', name: 'Uncle' },
  ])
  const listB = await listWith(t, t.account, [
    { email: 'both@example.cz', name: 'Bob', city: 'Brno' },
    { email: 'brno@example.cz', name: 'Cyril', city: 'Brno' },
    { email: 'ostrava@example.cz', name: 'Dana', city: 'Ostrava' },
  ])
  // A hard bounce elsewhere suppresses the address account-wide; an unconfirmed member is not subscribed.
  await t.ctx.db.execute(
    sql`UPDATE contacts SET suppressed = 'hard_bounce' WHERE email = 'bounced@example.cz'`,
  )
  await t.ctx.db.execute(sql`UPDATE memberships SET status = 6 WHERE contact_id =
    (SELECT id FROM contacts WHERE email = 'unconfirmed@example.cz')`)
  const segment = await t.req('POST', `/lists/${listB}/segments`, {
    body: { name: 'Brno', filter: { field: 'city', op: 'eq', value: 'Brno' } },
  })
  assert.equal(segment.status, 200, segment.text)
  const campaignId = await createCampaign(
    t,
    t.account,
    { lists: [listA], segments: [{ id: segment.body.id, list: listB }] },
    { html_text: CAMPAIGN_HTML.replace('</body>', '<p>Ahoj *|vokativ|*.</p></body>') },
  )

  it('sends each subscribed, unsuppressed address of the lists and segments once', async () => {
    const res = await t.req('POST', `/campaigns/${campaignId}/send`)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, { id: campaignId, status: 1 })
    const done = await waitForStatus(t, campaignId, [3, 4])
    assert.equal(done.status, 3, JSON.stringify(done))
    assert.equal(done.recipients, 3)
    const to = sink.messages.flatMap((m) => m.envelopeTo).sort()
    assert.deepEqual(to, ['anna@example.cz', 'both@example.cz', 'brno@example.cz'])
    assert.ok((await ledger(t, campaignId)).every((r) => r.status === 1))
    const detail = await t.req('GET', `/campaigns/${campaignId}`)
    assert.equal(detail.body.status, 3)
    assert.equal(detail.body.recipients, 3)
    assert.equal(detail.body.stats.inject, 3)
  })

  it('personalises, tracks, adds one-click unsubscribe and VERP, and signs with DKIM', async () => {
    const anna = sink.messages.find((m) => m.envelopeTo.includes('anna@example.cz'))!
    assert.equal(anna.parsed.subject, 'Hi Anna')
    assert.match(html(anna), /Hello Anna!/)
    assert.match(html(anna), /Ahoj Anno\./, 'vokativ from the contact')
    assert.match(html(anna), /style="color: #333;?"/, 'CSS inlined')
    assert.doesNotMatch(html(anna), /shop\.example\/sale/, 'the link is tracked')
    assert.equal(linksIn(anna, /http:\/\/[^"]+\/t\/c\/[^"]+/g).length, 1)
    assert.equal(linksIn(anna, /http:\/\/[^"]+\/t\/o\/[^"]+\.gif/g).length, 1, 'one open pixel')
    assert.match(String(anna.parsed.text), /\/t\/c\//, 'the text part links are tracked too')
    assert.match(anna.envelopeFrom, /^bounces\+.+@bounces\.shop\.example$/)
    assert.equal(header(anna, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click')
    assert.match(header(anna, 'List-Unsubscribe'), /^<http:\/\/[^>]+\/u\/[^>]+>, <mailto:unsubscribe\+/)
    const results = await dkimResults(anna.raw, domain)
    assert.equal(results[0]?.status.result, 'pass', JSON.stringify(results[0]?.status))
    assert.match(header(anna, 'DKIM-Signature').replace(/\s+/g, ''), /h=[^;]*List-Unsubscribe-Post/i)
  })

  it('counts a click, an open and a one-click unsubscribe, and leaves the campaign lists', async () => {
    const anna = sink.messages.find((m) => m.envelopeTo.includes('anna@example.cz'))!
    const click = linksIn(anna, /http:\/\/[^"]+\/t\/c\/[^"]+/g)[0]!
    const hit = await t.req('GET', new URL(click).pathname + '?utm=visitor')
    assert.equal(hit.status, 302)
    assert.equal(hit.headers.location, 'https://shop.example/sale?x=1&y=2')
    const pixel = linksIn(anna, /http:\/\/[^"]+\/t\/o\/[^"]+\.gif/g)[0]!
    assert.equal((await t.req('GET', new URL(pixel).pathname)).status, 200)
    assert.equal((await t.req('GET', new URL(pixel).pathname)).status, 200)
    const unsub = /<([^>]+\/u\/[^>]+)>/.exec(header(anna, 'List-Unsubscribe'))![1]!
    const one = await t.req('POST', new URL(unsub).pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    })
    assert.equal(one.status, 200)
    const stats = await t.req('GET', `/campaigns/${campaignId}/stats`)
    assert.equal(stats.status, 200, stats.text)
    assert.equal(stats.body.stats.inject, 3)
    assert.equal(stats.body.stats.open, 1)
    assert.equal(stats.body.stats.total_open, 2)
    assert.equal(stats.body.stats.click, 1)
    assert.equal(stats.body.stats.unsub, 1)
    const member = await queryRows<{ status: number }>(
      t.ctx.db,
      sql`SELECT m.status FROM memberships m JOIN contacts c ON c.id = m.contact_id
          WHERE c.email = 'anna@example.cz' AND m.list_id = ${listA}`,
    )
    assert.equal(member[0]?.status, 2)
  })

  it('serves the recipient web version with their merge values', async () => {
    const bob = sink.messages.find((m) => m.envelopeTo.includes('both@example.cz'))!
    const web = linksIn(bob, /http:\/\/[^"]+\/w\/[^"]+/g)[0]!
    const page = await t.req('GET', new URL(web).pathname)
    assert.equal(page.status, 200)
    assert.match(page.text, /Hello Bob!/)
  })

  it('sends test copies that count in no statistic', async () => {
    const before = sink.messages.length
    const res = await t.req('POST', `/campaigns/${campaignId}/test`, {
      body: { emails: ['qa@example.cz', 'Anna@example.cz'] },
    })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, { success: true, sent: 2 })
    // The call answers once the copies are queued; the worker's sender sends and marks them.
    const [queued] = await queryRows<{ batch_id: number }>(
      t.ctx.db,
      sql`SELECT batch_id FROM messages WHERE kind = 'test' ORDER BY id DESC LIMIT 1`,
    )
    assert.equal(await batchState(t, queued!.batch_id, ['completed']), 'completed')
    const copies = await sink.waitFor(before + 2)
    const anna = copies.slice(before).find((m) => m.envelopeTo.includes('anna@example.cz'))!
    assert.equal(anna.parsed.subject, 'Hi Anna')
    // Outside any campaign, the copy is named in the email log by the subject it went out with.
    const log = await t.req('GET', '/subscribers/anna@example.cz/email-log')
    const copyEntry = log.body.data.find((e: { campaign_id: number }) => e.campaign_id === 0)
    assert.equal(copyEntry?.mail_name, 'Hi Anna')
    const stats = await t.req('GET', `/campaigns/${campaignId}/stats`)
    assert.equal(stats.body.stats.inject, 3)
    const bad = await t.req('POST', `/campaigns/${campaignId}/test`, { body: { emails: ['nope'] } })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['emails.0'])
  })

  it("tracks links with merge tags and sends each click to the recipient's own target", async () => {
    const personal =
      '<p><a href="https://shop.example/me?e=*|EMAIL|*&amp;n=*|name|*">Mine</a>' +
      ' <a href="https://shop.example/sale">Sale</a> <a href="*|UNSUB|*">Unsubscribe</a>' +
      ' <a href="https://shop.example/prefs?u=*|UNSUB|*">Preferences</a></p>'
    const id = await createCampaign(t, t.account, { lists: [listB], segments: [] }, { html_text: personal })
    const before = sink.messages.length
    assert.equal((await t.req('POST', `/campaigns/${id}/send`)).status, 200)
    assert.equal((await waitForStatus(t, id, [3, 4])).status, 3)
    const mails = (await sink.waitFor(before + 3)).slice(before)
    const cyril = mails.find((m) => m.envelopeTo.includes('brno@example.cz'))!
    assert.doesNotMatch(html(cyril), /shop\.example\/(me|sale)/, 'both links are tracked')
    assert.match(html(cyril), /href="http:\/\/[^"]+\/u\/[^"]+"/, 'the unsubscribe link is our own page')
    // A link carrying the unsubscribe link is filled in at sending and left untracked.
    assert.match(html(cyril), /href="https:\/\/shop\.example\/prefs\?u=http:\/\/[^"]+\/u\/[^"]+"/)
    const [mine, sale] = linksIn(cyril, /http:\/\/[^"]+\/t\/c\/[^"]+/g)
    const hit = await t.req('GET', new URL(mine!).pathname)
    assert.equal(hit.status, 302)
    assert.equal(hit.headers.location, 'https://shop.example/me?e=brno@example.cz&n=Cyril')
    assert.equal((await t.req('GET', new URL(sale!).pathname)).headers.location, 'https://shop.example/sale')
    const log = await t.req('GET', `/campaigns/${id}/log?events[]=click`)
    assert.deepEqual(log.body.campaign_log.map((e: { url: string }) => e.url).sort(), [
      'https://shop.example/me?e=brno@example.cz&n=Cyril',
      'https://shop.example/sale',
    ])
    // A test copy is filled in for its own recipient.
    const res = await t.req('POST', `/campaigns/${id}/test`, { body: { emails: ['qa@example.cz'] } })
    assert.equal(res.status, 200, res.text)
    const copy = (await sink.waitFor(before + 4))[before + 3]!
    const copyLink = linksIn(copy, /http:\/\/[^"]+\/t\/c\/[^"]+/g)[0]!
    const copied = await t.req('GET', new URL(copyLink).pathname)
    assert.equal(copied.headers.location, 'https://shop.example/me?e=qa@example.cz&n=')
  })

  it("a test copy's unsubscribe shows the page and unsubscribes its recipient from no list", async () => {
    const before = sink.messages.length
    const res = await t.req('POST', `/campaigns/${campaignId}/test`, {
      body: { emails: ['ostrava@example.cz'] },
    })
    assert.equal(res.status, 200, res.text)
    const copy = (await sink.waitFor(before + 1))[before]!
    const unsub = /<([^>]+\/u\/[^>]+)>/.exec(header(copy, 'List-Unsubscribe'))![1]!
    const one = await t.req('POST', new URL(unsub).pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    })
    assert.equal(one.status, 200)
    const member = await queryRows<{ status: number }>(
      t.ctx.db,
      sql`SELECT m.status FROM memberships m JOIN contacts c ON c.id = m.contact_id
          WHERE c.email = 'ostrava@example.cz' AND m.list_id = ${listB}`,
    )
    assert.deepEqual(
      member.map((m) => m.status),
      [1],
    )
    // Nor is an unsubscription recorded that was none (the email log and the webhook would show it).
    const unsubs = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM events WHERE email = 'ostrava@example.cz' AND event = 'unsub'`,
    )
    assert.equal(unsubs[0]!.n, 0)
  })

  it('refuses to send a sent campaign again; 404 to another account and unknown ids, 422 to bad ids, 401 without key', async () => {
    const again = await t.req('POST', `/campaigns/${campaignId}/send`)
    assert.equal(again.status, 422)
    assert.ok(again.body.errors.status)
    const other = await t.createAccount('marketer')
    const calls: [string, string, unknown?][] = [
      ['POST', 'send'],
      ['POST', 'pause'],
      ['POST', 'resume'],
      ['POST', 'cancel'],
      ['POST', 'schedule', { scheduled_at: '2030-01-01 10:00:00' }],
      ['DELETE', 'schedule'],
      ['POST', 'test', { emails: ['qa@example.cz'] }],
    ]
    for (const [method, path, body] of calls) {
      const theirs = await t.req(method, `/campaigns/${campaignId}/${path}`, { key: other.key, body })
      assert.equal(theirs.status, 404, path)
      assert.deepEqual(theirs.body, { message: 'Campaign not found' })
      const missing = await t.req(method, `/campaigns/999999/${path}`, { body })
      assert.equal(missing.status, 404, path)
      const bad = await t.req(method, `/campaigns/abc/${path}`, { body })
      assert.equal(bad.status, 404, path)
      assert.deepEqual(bad.body, { message: 'Not Found' }, path)
      assert.equal((await t.req(method, `/campaigns/${campaignId}/${path}`, { key: null, body })).status, 401)
    }
    for (const path of ['POST /campaign', 'GET /campaign', 'GET /campaigns']) {
      const [method, prefix] = path.split(' ') as [string, string]
      const alias = await t.req(method, `${prefix}/${campaignId}/send`, { key: other.key })
      assert.equal(alias.status, 404, path)
    }
  })
  it("sends a person who unsubscribes through the page on to the list's unsub_page; one-click stays", async () => {
    // The first of the campaign's lists with an http(s) page: listA's is none, as a list saved before pages were
    // checked may hold (the API refuses it now).
    await t.ctx.db.execute(sql`UPDATE lists SET unsub_page = 'no page' WHERE id = ${listA}`)
    const bye = 'https://shop.example/bye?who=*|EMAIL|*'
    assert.equal((await t.req('PUT', `/lists/${listB}`, { body: { unsub_page: bye } })).status, 200)
    const unsubPath = (email: string) => {
      const m = sink.messages.find((x) => x.envelopeTo.includes(email))!
      return new URL(/<([^>]+\/u\/[^>]+)>/.exec(header(m, 'List-Unsubscribe'))![1]!).pathname
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    // A mail client's one-click is answered in place, whatever the list's page.
    const oneClick = await t.req('POST', unsubPath('both@example.cz'), {
      headers: form,
      body: 'List-Unsubscribe=One-Click',
    })
    assert.equal(oneClick.status, 200)
    const path = unsubPath('brno@example.cz')
    const page = await t.req('GET', path)
    assert.equal(page.status, 200)
    assert.match(page.text, /name="from" value="page"/)
    // The browser may follow the form's answer to the page's origin.
    assert.match(
      String(page.headers['content-security-policy']),
      /form-action 'self' https:\/\/shop\.example;/,
    )
    const pressed = await t.req('POST', path, { headers: form, body: 'List-Unsubscribe=One-Click&from=page' })
    assert.equal(pressed.status, 303)
    assert.equal(pressed.headers.location, 'https://shop.example/bye?who=brno%40example.cz')
    const member = await queryRows<{ status: number }>(
      t.ctx.db,
      sql`SELECT m.status FROM memberships m JOIN contacts c ON c.id = m.contact_id
          WHERE c.email = 'brno@example.cz' AND m.list_id = ${listB}`,
    )
    assert.equal(member[0]?.status, 2)
  })
})
