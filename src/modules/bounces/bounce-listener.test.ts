import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import readline from 'node:readline'
import nodemailer from 'nodemailer'
import { and, eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { subscriberRows } from '../../../test/helpers/subscriber-rows.js'
import { verpAddress } from '../../core/mail/verp.js'
import { events } from '../events/index.js'
import { messages } from '../messages/index.js'
import { applySoftBounce, contacts, memberships } from '../subscribers/index.js'
import { trackingLinks } from '../../core/mail/tracking-links.js'
import { messageBatches } from '../transactional/index.js'
import { insertPipeline } from '../pipelines/index.js'
import { messageSources } from '../index.js'
import { startBounceListener } from './bounce-listener.js'

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/bounces')
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name))

describe('bounce listener', async () => {
  const t = await startTestApp({ worker: false })
  const listener = await startBounceListener(t.ctx, 0, messageSources(t.ctx).lists, '127.0.0.1')
  const smtp = nodemailer.createTransport({
    host: '127.0.0.1',
    port: listener.port,
    secure: false,
    ignoreTLS: true,
  })
  let closed = false
  const stop = async () => {
    if (closed) return
    closed = true
    smtp.close()
    await listener.close()
  }
  after(stop)
  const rows = subscriberRows(t.ctx.db)
  const listId = await rows.list(t.account.id, 'News')
  const bounceDomain = 'bounces.shop.example'

  /** A subscribed person and a mail we sent them (transactional unless `of` says otherwise). */
  async function sentTo(email: string, of: Partial<typeof messages.$inferInsert> = {}) {
    const contact = await rows.contact(t.account.id, { email })
    await rows.join(contact, listId)
    const [m] = await t.ctx.db
      .insert(messages)
      .values({
        accountId: t.account.id,
        kind: 'transactional',
        email,
        contactId: contact.id,
        status: 1,
        ...of,
      })
      .returning()
    return { contact, message: m!, verp: verpAddress(t.ctx.linkSecret, `m${m!.id}`, bounceDomain) }
  }

  /** Gives the message a transactional body with these cc and bcc copies; the body's id. */
  async function withCopies(messageId: number, copies: (typeof messageBatches.$inferInsert)['copies']) {
    const [batch] = await t.ctx.db
      .insert(messageBatches)
      .values({
        accountId: t.account.id,
        fromName: 'Shop',
        fromEmail: 'orders@shop.example',
        subject: 'Receipt',
        text: 'x',
        copies,
      })
      .returning()
    await t.ctx.db.update(messages).set({ batchId: batch!.id }).where(eq(messages.id, messageId))
    return batch!.id
  }

  const send = (to: string, raw: Buffer) => smtp.sendMail({ envelope: { from: '', to: [to] }, raw })
  const eventsOf = (messageId: number) =>
    t.ctx.db.select().from(events).where(eq(events.messageId, messageId))
  const statusIn = async (contactId: number) =>
    (
      await t.ctx.db
        .select()
        .from(memberships)
        .where(and(eq(memberships.contactId, contactId), eq(memberships.listId, listId)))
    )[0]!.status

  it('a DSN hard bounce suppresses the address account-wide and marks it 4', async () => {
    const { contact, message, verp } = await sentTo('jan.novak@example.org')
    await send(verp, fixture('postfix-user-unknown.eml'))
    assert.equal(await statusIn(contact.id), 4)
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, contact.id))
    assert.equal(c!.suppressed, 'hard_bounce')
    assert.equal(c!.bouncedHard, 1)
    const evs = await eventsOf(message.id)
    assert.deepEqual(
      evs.map((e) => e.event),
      ['hard_bounce'],
    )
    assert.match(evs[0]!.msg ?? '', /5\.1\.1/)
    // The subscriber's reads show the report's words; a later soft bounce without any keeps them.
    const detail = await t.req('GET', `/lists/${listId}/subscriber/jan.novak@example.org`)
    assert.match(
      detail.body.subscriber.bounce_message ?? '',
      /^550 5\.1\.1 <jan\.novak@example\.org>: Recipient/,
    )
    await applySoftBounce(t.ctx.db, t.account.id, 'jan.novak@example.org', null, new Date())
    const global = await t.req('GET', '/subscribers/jan.novak@example.org')
    assert.deepEqual(
      [global.body.subscriber.bounce_soft, global.body.subscriber.bounce_message],
      [1, c!.bounceMessage],
    )
  })

  it('a report repeated about the same message changes nothing more, nor undoes a re-subscription', async () => {
    const bounced = await sentTo('twice.bounced@example.org')
    const complained = await sentTo('twice.complained@example.org')
    await send(bounced.verp, fixture('postfix-user-unknown.eml'))
    await send(complained.verp, fixture('arf-yahoo-abuse.eml'))
    // The person is taken back (as resubscribe does), then the relay sends the same report again.
    for (const { contact } of [bounced, complained]) {
      await t.ctx.db.update(contacts).set({ suppressed: null }).where(eq(contacts.id, contact.id))
      await t.ctx.db.update(memberships).set({ status: 1 }).where(eq(memberships.contactId, contact.id))
    }
    await send(bounced.verp, fixture('postfix-user-unknown.eml'))
    await send(complained.verp, fixture('arf-yahoo-abuse.eml'))
    for (const { contact, message } of [bounced, complained]) {
      assert.equal(await statusIn(contact.id), 1, contact.email)
      const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, contact.id))
      assert.equal(c!.suppressed, null, contact.email)
      assert.equal((await eventsOf(message.id)).length, 1, contact.email)
    }
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, bounced.contact.id))
    assert.equal(c!.bouncedHard, 1)
  })

  it('a delayed DSN is a warning: no bounce is counted and the subscriber stays', async () => {
    const { contact, message, verp } = await sentTo('petra.vesela@example.net')
    await send(verp, fixture('postfix-delayed.eml'))
    assert.equal(await statusIn(contact.id), 1)
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, contact.id))
    assert.equal(c!.bounceSoft, 0)
    assert.equal(c!.suppressed, null)
    assert.deepEqual(await eventsOf(message.id), [])
  })

  it('an ARF report is a complaint: status 5 and suppression', async () => {
    const { contact, message, verp } = await sentTo('complainer@example.com')
    await send(verp, fixture('arf-yahoo-abuse.eml'))
    assert.equal(await statusIn(contact.id), 5)
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, contact.id))
    assert.equal(c!.suppressed, 'complaint')
    assert.deepEqual(
      (await eventsOf(message.id)).map((e) => e.event),
      ['spam_complaint'],
    )
  })

  it('an out-of-office reply and a human reply change nothing', async () => {
    const { contact, message, verp } = await sentTo('away@example.com')
    await send(verp, fixture('outlook-out-of-office.eml'))
    await send(verp, fixture('human-reply.eml'))
    assert.equal(await statusIn(contact.id), 1)
    assert.deepEqual(await eventsOf(message.id), [])
  })

  it("a bounce of a cc or bcc copy leaves the message's own recipient alone", async () => {
    const { contact, message, verp } = await sentTo('buyer@example.com')
    await withCopies(message.id, {
      'buyer@example.com': { cc: ['accounts@example.com'], bcc: ['archive@example.com'] },
    })
    const userUnknown = fixture('postfix-user-unknown.eml').toString('utf8')
    for (const copy of ['accounts@example.com', 'Archive@Example.com']) {
      await send(verp, Buffer.from(userUnknown.replaceAll('jan.novak@example.org', copy)))
    }
    assert.equal(await statusIn(contact.id), 1)
    assert.deepEqual(await eventsOf(message.id), [])
    // The copies' addresses are suppressed, so they get no more mail.
    const copies = await t.ctx.db
      .select({ email: contacts.email, suppressed: contacts.suppressed })
      .from(contacts)
      .where(eq(contacts.accountId, t.account.id))
    assert.deepEqual(
      copies
        .filter((c) => /^(?:accounts|archive)@/.test(c.email))
        .sort((a, b) => a.email.localeCompare(b.email)),
      [
        { email: 'accounts@example.com', suppressed: 'hard_bounce' },
        { email: 'archive@example.com', suppressed: 'hard_bounce' },
      ],
    )
    // The recipient's own bounce, and one naming an address we never sent to (forwarded), still count.
    await send(verp, Buffer.from(userUnknown.replaceAll('jan.novak@example.org', 'buyer@example.com')))
    assert.equal(await statusIn(contact.id), 4)
    const forwarded = await sentTo('moved@example.com')
    await send(
      forwarded.verp,
      Buffer.from(userUnknown.replaceAll('jan.novak@example.org', 'moved@elsewhere.example')),
    )
    assert.equal(await statusIn(forwarded.contact.id), 4)
  })

  it('refuses addresses that are not ours', async () => {
    for (const to of ['someone@bounces.shop.example', 'unsubscribe+garbage@bounces.shop.example']) {
      await assert.rejects(
        send(to, fixture('postfix-user-unknown.eml')),
        (err: { responseCode?: number }) => {
          assert.equal(err.responseCode, 550)
          return true
        },
      )
    }
  })

  /** A fixture whose returned headers name `verp` as the original return path. */
  const returning = (name: string, verp: string) =>
    Buffer.from(
      fixture(name)
        .toString('utf8')
        .replace(/bounces\+[A-Za-z0-9_.-]+@bounce\.tidings\.test/g, verp),
    )

  it('takes reports at postmaster and abuse, by the signed return path they return', async () => {
    const bounced = await sentTo('postmaster.case@example.org')
    await send('postmaster@bounces.shop.example', returning('postfix-user-unknown.eml', bounced.verp))
    assert.equal(await statusIn(bounced.contact.id), 4)
    assert.deepEqual(
      (await eventsOf(bounced.message.id)).map((e) => e.event),
      ['hard_bounce'],
    )
    const complained = await sentTo('fbl.case@example.com')
    await send('Abuse@Bounces.Shop.Example', returning('arf-yahoo-abuse.eml', complained.verp))
    assert.equal(await statusIn(complained.contact.id), 5)
  })

  it('counts a report sent to several of our addresses once, and takes at most 100 recipients', async () => {
    const { contact, message, verp } = await sentTo('many.copies@example.org')
    // A soft bounce: each one is logged and counted, so a report handled once per address would show four.
    const report = returning('mailbox-full.eml', verp)
    const to = [verp, 'postmaster@bounces.shop.example', 'abuse@bounces.shop.example', 'postmaster']
    await smtp.sendMail({ envelope: { from: '', to }, raw: report })
    assert.deepEqual(
      (await eventsOf(message.id)).map((e) => e.event),
      ['soft_bounce'],
    )
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, contact.id))
    assert.equal(c!.bounceSoft, 1)
    const flood = Array.from({ length: 101 }, (_, i) => `postmaster@d${i}.bounces.shop.example`)
    const info = await smtp.sendMail({ envelope: { from: '', to: flood }, raw: report })
    assert.equal(info.accepted.length, 100)
    assert.equal(info.rejected.length, 1)
  })

  it('takes a bad-signature return path but ignores it unless the report returns a good one', async () => {
    const { contact, message, verp } = await sentTo('someone@example.com')
    const tampered = verp.replace(/\.([A-Za-z0-9_-])/, (_m, c: string) => `.${c === 'A' ? 'B' : 'A'}`)
    // Forged or garbled: the report inside names no message of ours either.
    for (const to of [tampered, 'bounces+garbage@bounces.shop.example', 'postmaster@bounces.shop.example'])
      await send(to, returning('postfix-user-unknown.eml', tampered))
    assert.equal(await statusIn(contact.id), 1)
    assert.deepEqual(await eventsOf(message.id), [])
    // An MTA that folded the return path's case: the returned original still carries it as we wrote it.
    await send(verp.toLowerCase(), returning('postfix-user-unknown.eml', verp))
    assert.equal(await statusIn(contact.id), 4)
  })

  it('a mail to the mailto unsubscribe address unsubscribes once', async () => {
    const { contact, message } = await sentTo('leaver@example.com')
    const mailto = trackingLinks(t.ctx)
      .unsubscribeMailto(message.id, bounceDomain)
      .replace(/^mailto:/, '')
    const raw = Buffer.from('From: leaver@example.com\r\nTo: x\r\nSubject: unsubscribe\r\n\r\nplease\r\n')
    await smtp.sendMail({ envelope: { from: 'leaver@example.com', to: [mailto] }, raw })
    await smtp.sendMail({ envelope: { from: 'leaver@example.com', to: [mailto] }, raw })
    assert.equal(await statusIn(contact.id), 2)
    assert.deepEqual(
      (await eventsOf(message.id)).map((e) => e.event),
      ['unsub'],
    )
  })

  it('a mailto unsubscribe leaves the lists of the mail it is about, as its link does', async () => {
    const otherList = await rows.list(t.account.id, 'Other')
    const campaign = await t.req('POST', '/campaigns', {
      body: {
        title: 'Sale',
        subject: 'Sale',
        from_name: 'Shop',
        from_email: 'news@shop.example',
        reply_to: 'news@shop.example',
        html_text: '<p>Sale</p>',
        recepient_lists: [listId],
      },
    })
    assert.equal(campaign.status, 200)
    const pipeline = await insertPipeline(t.ctx.db, {
      accountId: t.account.id,
      name: 'Welcome',
      listId,
      status: 'active',
      trigger: { type: 'api' },
      reentry: 'once',
      start: 'e',
      actions: [{ id: 'e', type: 'end', properties: { name: 'end' }, next: [] }],
    })
    const mails = [
      await sentTo('campaign.reader@example.com', { kind: 'campaign', campaignId: campaign.body.id }),
      await sentTo('flow.reader@example.com', { kind: 'automation', pipelineId: pipeline.id, actionId: 'm' }),
    ]
    for (const { contact, message } of mails) {
      await rows.join(contact, otherList)
      const mailto = trackingLinks(t.ctx)
        .unsubscribeMailto(message.id, bounceDomain)
        .replace(/^mailto:/, '')
      const raw = Buffer.from(`From: ${message.email}\r\nTo: x\r\nSubject: unsubscribe\r\n\r\nplease\r\n`)
      await smtp.sendMail({ envelope: { from: message.email, to: [mailto] }, raw })
      const statuses = await t.ctx.db
        .select({ listId: memberships.listId, status: memberships.status })
        .from(memberships)
        .where(eq(memberships.contactId, contact.id))
        .orderBy(memberships.listId)
      assert.deepEqual(statuses, [
        { listId, status: 2 },
        { listId: otherList, status: 1 },
      ])
    }
  })

  /** Speaks SMTP to the listener one command at a time, as an MTA without pipelining does; the reply codes. */
  async function converse(commands: string[]): Promise<number[]> {
    const socket = net.connect({ host: '127.0.0.1', port: listener.port })
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')))
    const lines = readline.createInterface({ input: socket })[Symbol.asyncIterator]()
    const reply = async () => {
      for (;;) {
        const { value, done } = (await lines.next()) as IteratorResult<string>
        if (done) throw new Error('connection closed')
        if (/^\d{3} /.test(value)) return Number(value.slice(0, 3))
      }
    }
    const codes = [await reply()]
    for (const command of commands) {
      socket.write(`${command}\r\n`)
      codes.push(await reply())
    }
    socket.destroy()
    return codes
  }
  const asData = (raw: Buffer) => `${raw.toString('utf8').replace(/\r?\n/g, '\r\n')}\r\n.`

  it('applies a report to the recipients of its own transaction only, not to those of one reset before', async () => {
    const dropped = await sentTo('reset.dropped@example.org')
    const named = await sentTo('reset.named@example.org')
    const codes = await converse([
      'EHLO mta.example.org',
      'MAIL FROM:<>',
      `RCPT TO:<${dropped.verp}>`,
      'RSET',
      'MAIL FROM:<>',
      `RCPT TO:<${named.verp}>`,
      'DATA',
      asData(fixture('postfix-user-unknown.eml')),
    ])
    assert.deepEqual(codes, [220, 250, 250, 250, 250, 250, 250, 354, 250])
    assert.equal(await statusIn(named.contact.id), 4)
    assert.equal(await statusIn(dropped.contact.id), 1)
    assert.deepEqual(await eventsOf(dropped.message.id), [])
  })

  it('takes "postmaster" quoted, as RFC 5321 allows', async () => {
    const bounced = await sentTo('quoted.postmaster@example.org')
    const codes = await converse([
      'EHLO mta.example.org',
      'MAIL FROM:<>',
      'RCPT TO:<"postmaster"@bounces.shop.example>',
      'DATA',
      asData(returning('postfix-user-unknown.eml', bounced.verp)),
    ])
    assert.deepEqual(codes, [220, 250, 250, 250, 354, 250])
    assert.equal(await statusIn(bounced.contact.id), 4)
  })

  it('takes the mailto unsubscribe address quoted, as RFC 5321 allows', async () => {
    const { contact, message } = await sentTo('quoted.leaver@example.com')
    const [local, domain] = trackingLinks(t.ctx)
      .unsubscribeMailto(message.id, bounceDomain)
      .replace(/^mailto:/, '')
      .split('@')
    const codes = await converse([
      'EHLO mta.example.org',
      'MAIL FROM:<quoted.leaver@example.com>',
      `RCPT TO:<"${local}"@${domain}>`,
      'DATA',
      asData(Buffer.from('From: quoted.leaver@example.com\r\nSubject: unsubscribe\r\n\r\nplease\r\n')),
    ])
    assert.deepEqual(codes, [220, 250, 250, 250, 354, 250])
    assert.equal(await statusIn(contact.id), 2)
  })

  it('takes a report whose returned original is big, and one with a NUL in its diagnostic', async () => {
    const big = await sentTo('big.original@example.org')
    const dsn = fixture('postfix-user-unknown.eml').toString('utf8')
    const end = dsn.lastIndexOf('--4YXp2T0c3Pz9vKq')
    // 6 MB of attachment in the returned original, past the 5 MB the listener reads.
    const padding = `${'QUJD'.repeat(19)}\n`.repeat(80_000)
    await send(big.verp, Buffer.from(`${dsn.slice(0, end)}${padding}${dsn.slice(end)}`))
    assert.equal(await statusIn(big.contact.id), 4)
    const nul = await sentTo('nul.diagnostic@example.org')
    await send(nul.verp, Buffer.from(dsn.replaceAll('rejected: User unknown', 'rejected: User\u0000unknown')))
    assert.equal(await statusIn(nul.contact.id), 4)
    const [c] = await t.ctx.db.select().from(contacts).where(eq(contacts.id, nul.contact.id))
    assert.match(c!.bounceMessage ?? '', /rejected: User unknown/)
  })

  it('brings no contact back for an address erased since the mail went', async () => {
    const erased = await sentTo('erased.since@example.org')
    const before = await t.ctx.db.select({ id: contacts.id }).from(contacts)
    const gone = await t.req('DELETE', '/subscribers/erased.since@example.org/delete')
    assert.equal(gone.status, 200)
    await send(erased.verp, fixture('postfix-user-unknown.eml'))
    await send(erased.verp, fixture('arf-yahoo-abuse.eml'))
    const after = await t.ctx.db.select({ id: contacts.id, email: contacts.email }).from(contacts)
    assert.deepEqual(
      after.filter((c) => c.email.endsWith('erased.invalid')),
      [],
    )
    assert.equal(after.length, before.length - 1)
  })

  it('changes nobody for a copy erased since, and the erasure took the address out of the copies', async () => {
    const { contact, message, verp } = await sentTo('buyer.of.erased@example.com')
    const copy = await rows.contact(t.account.id, { email: 'erased.copy@example.com' })
    await rows.join(copy, listId)
    const batchId = await withCopies(message.id, {
      'buyer.of.erased@example.com': {
        cc: ['erased.copy@example.com', 'kept.copy@example.com'],
        bcc: [],
        names: { 'erased.copy@example.com': 'Erased Copy' },
      },
    })
    assert.equal((await t.req('DELETE', '/subscribers/erased.copy@example.com/delete')).status, 200)
    const [kept] = await t.ctx.db.select().from(messageBatches).where(eq(messageBatches.id, batchId))
    assert.doesNotMatch(JSON.stringify(kept!.copies), /erased\.copy|Erased Copy/)
    assert.deepEqual(kept!.copies['buyer.of.erased@example.com']?.cc[1], 'kept.copy@example.com')
    const userUnknown = fixture('postfix-user-unknown.eml').toString('utf8')
    await send(verp, Buffer.from(userUnknown.replaceAll('jan.novak@example.org', 'erased.copy@example.com')))
    assert.equal(await statusIn(contact.id), 1)
    assert.deepEqual(await eventsOf(message.id), [])
    const back = await t.ctx.db
      .select({ email: contacts.email })
      .from(contacts)
      .where(eq(contacts.accountId, t.account.id))
    assert.deepEqual(
      back.filter((c) => /erased/.test(c.email)).map((c) => c.email),
      ['buyer.of.erased@example.com'],
    )
  })

  it('takes no more connections once closed', async () => {
    await stop()
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: listener.port })
      socket.setTimeout(5000, () => {
        socket.destroy()
        resolve('no answer')
      })
      socket.once('connect', () => {
        socket.destroy()
        resolve('connected')
      })
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    })
    assert.equal(refused, 'ECONNREFUSED')
  })
})
