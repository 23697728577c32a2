import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink, type SmtpSink } from '../../../test/helpers/smtp-sink.js'
import { confirmationJobsFor, createList, memberOf } from './subscribers.write.test-helpers.js'

async function mailsTo(sink: SmtpSink, address: string, atLeast: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = sink.messages.filter((m) => m.envelopeTo.includes(address))
    if (found.length >= atLeast) return found
    if (Date.now() > deadline) throw new Error(`expected ${atLeast} mail(s) to ${address}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// At file level so it closes after the app (the app's pooled SMTP connections would hold its close).
const sink = await startSmtpSink()

describe('subscribe to a double opt-in list', async () => {
  const t = await startTestApp({ config: { smtpUrl: sink.url } })
  const listId = await createList(t, {
    name: 'DOI',
    double_optin: true,
    from_email: 'news@shop.cz',
    conf_subject: 'Please confirm',
    conf_message: '<p><a href="*|CONFIRM|*">Confirm</a></p>',
  })
  const subscribe = (body: Record<string, unknown>) => t.req('POST', `/lists/${listId}/subscribe`, { body })

  it('leaves the address unconfirmed and sends one confirmation mail', async () => {
    const res = await subscribe({ subscriber_data: { email: 'doi+1@example.cz', name: 'Eva' } })
    assert.equal(res.status, 200)
    assert.equal(res.body.status, 6)
    assert.equal(res.body.already_subscribed, false)
    const [mail] = await mailsTo(sink, 'doi+1@example.cz', 1)
    assert.equal(mail?.parsed.subject, 'Please confirm')
    assert.match(String(mail?.parsed.html), /\/confirm\//)

    // Subscribing again while unconfirmed asks nobody a second time.
    const again = await subscribe({ subscriber_data: { email: 'doi+1@example.cz' } })
    assert.equal(again.body.status, 6)
    assert.equal(await confirmationJobsFor(t, listId), 1)
  })

  it('turns a requested status 1 into 6 unless skip_confirmation', async () => {
    const asked = await subscribe({ subscriber_data: { email: 'ask@example.cz', status: 1 } })
    assert.equal(asked.body.status, 6)
    const skipped = await subscribe({
      subscriber_data: { email: 'skip@example.cz', status: 1 },
      skip_confirmation: true,
    })
    assert.equal(skipped.body.status, 1)
    // An unconfirmed member subscribed again with skip_confirmation is subscribed at once.
    const confirmed = await subscribe({
      subscriber_data: { email: 'ask@example.cz' },
      skip_confirmation: true,
    })
    assert.equal(confirmed.body.status, 1)
    assert.equal(confirmed.body.already_subscribed, false)
  })

  it('an explicit status 6 with skip_confirmation waits unconfirmed without a mail of ours', async () => {
    // A caller that runs its own opt-in: 6 now, 1 through update-subscriber once the person confirms with it.
    const before = await confirmationJobsFor(t, listId)
    const own = await subscribe({
      subscriber_data: { email: 'own-doi@example.cz', status: 6 },
      skip_confirmation: true,
      update_existing: true,
      resubscribe: true,
    })
    assert.deepEqual([own.status, own.body.status], [200, 6])
    assert.equal((await memberOf(t, listId, 'own-doi@example.cz'))?.status, 6)
    const plain = await createList(t, { name: 'Plain', from_email: 'news@shop.cz' })
    const other = await t.req('POST', `/lists/${plain}/subscribe`, {
      body: { subscriber_data: { email: 'own-doi@example.cz', status: 6 }, skip_confirmation: true },
    })
    assert.equal(other.body.status, 6)
    assert.equal(await confirmationJobsFor(t, listId), before)
    assert.equal(await confirmationJobsFor(t, plain), 0)
    // Without skip_confirmation, an explicit 6 on a list without double opt-in is asked to confirm.
    const asked = await t.req('POST', `/lists/${plain}/subscribe`, {
      body: { subscriber_data: { email: 'asked-6@example.cz', status: 6 } },
    })
    assert.equal(asked.body.status, 6)
    await mailsTo(sink, 'asked-6@example.cz', 1)
  })

  it('stores vokativ and vokativ_s, shows them, and the confirmation mail greets with them', async () => {
    const greeting = await createList(t, {
      name: 'Greeting',
      double_optin: true,
      from_email: 'news@shop.cz',
      conf_subject: 'Dobrý den, *|vokativ|* *|VOKATIV_S|*',
      conf_message: '<p><a href="*|CONFIRM|*">Potvrdit</a></p>',
    })
    const email = 'jana.vokativ@example.cz'
    const res = await t.req('POST', `/lists/${greeting}/subscribe`, {
      body: { subscriber_data: { email, name: 'Jana', vokativ: 'Jano', vokativ_s: 'Nováková' } },
    })
    assert.equal(res.status, 200, res.text)
    const [mail] = await mailsTo(sink, email, 1)
    assert.equal(mail?.parsed.subject, 'Dobrý den, Jano Nováková')
    const detail = (await t.req('GET', `/lists/${greeting}/subscriber/${email}`)).body.subscriber
    assert.deepEqual([detail.vokativ, detail.vokativ_s], ['Jano', 'Nováková'])
    assert.match(detail.inserted_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    // update_existing overwrites them like any field; the bulk endpoints take them too.
    await t.req('POST', `/lists/${greeting}/subscribe`, {
      body: { subscriber_data: { email, vokativ_s: 'Novák' }, update_existing: true },
    })
    await t.req('POST', `/lists/${greeting}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'petr.vokativ@example.cz', vokativ: 'Petře' }] },
    })
    const global = (await t.req('GET', `/subscribers/${email}`)).body.subscriber
    assert.deepEqual([global.vokativ, global.vokativ_s], ['Jano', 'Novák'])
    const petr = (await t.req('GET', `/lists/${greeting}/subscriber/petr.vokativ@example.cz`)).body.subscriber
    assert.deepEqual([petr.vokativ, petr.vokativ_s], ['Petře', ''])
    const bulkUpdate = await t.req('PUT', `/lists/${greeting}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'petr.vokativ@example.cz', vokativ_s: 'Svobodo' }] },
    })
    assert.equal(bulkUpdate.status, 200, bulkUpdate.text)
    const updated = (await t.req('GET', `/subscribers/petr.vokativ@example.cz`)).body.subscriber
    assert.deepEqual([updated.vokativ, updated.vokativ_s], ['Petře', 'Svobodo'])
  })

  it('a resubscribe of an unsubscribed member waits for confirmation again, with a new mail', async () => {
    const email = 'back@example.cz'
    await subscribe({ subscriber_data: { email }, skip_confirmation: true })
    await t.req('DELETE', `/lists/${listId}/unsubscribe`, { body: { email } })
    const res = await subscribe({ subscriber_data: { email }, resubscribe: true })
    assert.equal(res.body.status, 6)
    assert.equal((await memberOf(t, listId, email))?.unsubscribedAt, null)
    await mailsTo(sink, email, 1)
  })

  it('sends nothing for bulk subscribes and for a requested status 2', async () => {
    const before = await confirmationJobsFor(t, listId)
    const bulk = await t.req('POST', `/lists/${listId}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'bulk1@example.cz' }, { email: 'bulk2@example.cz' }] },
    })
    assert.deepEqual(bulk.body, { inserts: 2 })
    assert.equal((await memberOf(t, listId, 'bulk1@example.cz'))?.status, 1)
    const two = await subscribe({ subscriber_data: { email: 'no@example.cz', status: 2 } })
    assert.equal(two.body.status, 2)
    assert.equal(await confirmationJobsFor(t, listId), before)
  })
})
