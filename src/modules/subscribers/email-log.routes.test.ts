import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { messages } from '../messages/index.js'
import { insertEvent } from '../outcomes/index.js'
import type { EventType } from '../events/index.js'

const ISO_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const START = Date.parse('2026-02-01T10:00:00.250Z')
const EMAIL = 'jana+news@example.cz'
const ENTRY_KEYS = [
  'action_id',
  'autoresponder_id',
  'campaign_id',
  'email',
  'event',
  'mail_name',
  'msg',
  'occured_at',
  'url',
].sort()

describe('GET /subscribers/{email}/email-log', async () => {
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()
  const { id: listId } = (await t.req('POST', '/lists', { body: { name: 'News' } })).body
  for (const email of [EMAIL, 'quiet@example.cz']) {
    await t.req('POST', `/lists/${listId}/subscribe`, {
      body: { subscriber_data: { email }, skip_confirmation: true },
    })
  }
  const [message] = await t.ctx.db
    .insert(messages)
    .values({
      accountId: t.account.id,
      kind: 'automation',
      pipelineId: 7,
      actionId: 'mail-1',
      email: EMAIL,
      subject: 'Welcome',
    })
    .returning()

  // 25 events a minute apart: send, open, click, repeating; the last one is the newest.
  const kinds: EventType[] = ['send', 'open', 'click']
  for (let i = 0; i < 25; i++) {
    const event = kinds[i % 3]!
    await insertEvent(t.ctx.db, {
      accountId: t.account.id,
      messageId: message!.id,
      pipelineId: 7,
      actionId: 'mail-1',
      email: EMAIL,
      event,
      url: event === 'click' ? `https://shop.example/${i}` : null,
      occurredAt: new Date(START + i * 60_000),
    })
  }
  // The same address in another account, and a transactional recipient who is no contact.
  await insertEvent(t.ctx.db, {
    accountId: other.id,
    email: EMAIL,
    event: 'hard_bounce',
    msg: '550 no such user',
    occurredAt: new Date(START),
  })
  await insertEvent(t.ctx.db, {
    accountId: t.account.id,
    email: 'receipt@example.cz',
    event: 'send',
    occurredAt: new Date(START),
  })

  const log = (query = '', email = EMAIL, key?: string) =>
    t.req('GET', `/subscribers/${email}/email-log${query}`, key ? { key } : {})

  it('answers the first page newest first, in the wire shape', async () => {
    const res = await log()
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(Object.keys(res.body).sort(), ['current_page', 'data', 'last_page', 'per_page', 'total'])
    assert.equal(res.body.current_page, 1)
    assert.equal(res.body.per_page, 20)
    assert.equal(res.body.total, 25)
    assert.equal(res.body.last_page, 2)
    assert.equal(res.body.data.length, 20)
    for (const entry of res.body.data) {
      assert.deepEqual(Object.keys(entry).sort(), ENTRY_KEYS)
      assert.match(entry.occured_at, ISO_MICRO)
    }
    assert.deepEqual(res.body.data[0], {
      campaign_id: 0,
      autoresponder_id: 7,
      action_id: 'mail-1',
      event: 'send', // i = 24
      msg: null,
      url: null,
      email: EMAIL,
      occured_at: '2026-02-01T10:24:00.250000Z',
      mail_name: 'Welcome',
    })
    const times = res.body.data.map((e: { occured_at: string }) => e.occured_at)
    assert.deepEqual(times, [...times].sort().reverse())
  })

  it('pages with page and per_page', async () => {
    const second = await log('?page=2')
    assert.equal(second.body.current_page, 2)
    assert.equal(second.body.data.length, 5)
    assert.equal(second.body.data[4].occured_at, '2026-02-01T10:00:00.250000Z')
    const small = await log('?per_page=10&page=3')
    assert.equal(small.body.per_page, 10)
    assert.equal(small.body.last_page, 3)
    assert.equal(small.body.data.length, 5)
    const beyond = await log('?page=9')
    assert.equal(beyond.status, 200)
    assert.deepEqual(beyond.body.data, [])
    assert.equal(beyond.body.total, 25)
  })

  it('filters by events[] in every spelling a client sends', async () => {
    const both = await log('?events[]=open&events[]=click&per_page=100')
    assert.equal(both.body.total, 16)
    assert.ok(both.body.data.every((e: { event: string }) => e.event === 'open' || e.event === 'click'))
    const clicks = (await log('?events%5B%5D=click')).body
    assert.equal(clicks.total, 8)
    assert.match(clicks.data[0].url, /^https:\/\/shop\.example\/\d+$/)
    assert.equal((await log('?events=send')).body.total, 9)
    assert.equal((await log('?events[0]=send&events[1]=open')).body.total, 17, "PHP's http_build_query")
    assert.equal((await log('?events[]=unsub')).body.total, 0, 'a known address with no such event')
  })

  it('rejects unknown event types and per_page over 100 with 422', async () => {
    const bad = await log('?events[]=open&events[]=bogus')
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['events'])
    const big = await log('?per_page=101')
    assert.equal(big.status, 422)
    assert.deepEqual(Object.keys(big.body.errors), ['per_page'])
    assert.equal((await log('?per_page=0')).status, 422)
  })

  it('takes the address literally with +, trimmed and lower-cased', async () => {
    const res = await log('', '%20Jana+News@Example.CZ%20')
    assert.equal(res.status, 200)
    assert.equal(res.body.total, 25)
  })

  it('answers a contact without mail with an empty page, a stranger with 404', async () => {
    const quiet = await log('', 'quiet@example.cz')
    assert.equal(quiet.status, 200)
    assert.deepEqual(quiet.body, { current_page: 1, data: [], per_page: 20, total: 0, last_page: 1 })
    const stranger = await log('', 'nobody@example.cz')
    assert.equal(stranger.status, 404)
    assert.deepEqual(Object.keys(stranger.body), ['message'])
    const receipt = await log('', 'receipt@example.cz')
    assert.equal(receipt.status, 200, 'a transactional recipient has a log without being a contact')
    assert.equal(receipt.body.total, 1)
  })

  it("keeps each account's log to itself", async () => {
    const theirs = await log('', EMAIL, other.key)
    assert.equal(theirs.status, 200)
    assert.equal(theirs.body.total, 1)
    assert.equal(theirs.body.data[0].event, 'hard_bounce')
    assert.equal(theirs.body.data[0].msg, '550 no such user')
    assert.equal(theirs.body.data[0].autoresponder_id, null)
    assert.equal((await log('', 'quiet@example.cz', other.key)).status, 404)
    assert.equal((await log('', 'receipt@example.cz', other.key)).status, 404)
  })

  it('needs a key', async () => {
    const res = await t.req('GET', `/subscribers/${EMAIL}/email-log`, { key: null })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { message: 'Unauthorized' })
  })
})
