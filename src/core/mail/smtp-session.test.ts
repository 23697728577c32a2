import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { dataOf, openSmtpSession } from './smtp-session.js'

/** A relay keeping every message as it arrived, offering PIPELINING and SMTPUTF8 or not. */
async function startRelay(opts: { pipelining: boolean; smtpUtf8?: boolean }) {
  const received: { from: string; to: string[]; raw: string; smtpUtf8: boolean }[] = []
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    hidePIPELINING: !opts.pipelining,
    hideSMTPUTF8: opts.smtpUtf8 === false,
    logger: false,
    closeTimeout: 500,
    onMailFrom(address, _session, cb) {
      if (address.address.startsWith('blocked@'))
        return cb(Object.assign(new Error('sender blocked'), { responseCode: 553 }))
      cb()
    },
    onRcptTo(address, _session, cb) {
      if (address.address.startsWith('refused@'))
        return cb(Object.assign(new Error('no such user'), { responseCode: 550 }))
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString()
        if (raw.includes('X-Reject: yes'))
          return cb(Object.assign(new Error('content refused'), { responseCode: 554 }))
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          smtpUtf8: session.envelope.smtpUtf8 === true,
        })
        cb()
      })
    },
  })
  server.on('error', () => undefined)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.server.address() as AddressInfo).port, received }
}

const text = (b: Buffer[]) => Buffer.concat(b).toString()

describe('dataOf', () => {
  it('doubles a dot that starts a line, ends with CRLF . CRLF, and leaves other bytes alone', () => {
    assert.equal(text(dataOf(Buffer.from('a\r\n.b\r\n..c\r\n'))), 'a\r\n..b\r\n...c\r\n.\r\n')
    assert.equal(text(dataOf(Buffer.from('.first\r\nx.y'))), '..first\r\nx.y\r\n.\r\n')
    assert.equal(text(dataOf(Buffer.from(''))), '.\r\n')
  })

  it('makes bare CR and LF line ends CRLF before stuffing, so no lone line end can end the data', () => {
    assert.equal(text(dataOf(Buffer.from('a\n.\nb\r.c\r\n'))), 'a\r\n..\r\nb\r\n..c\r\n.\r\n')
  })

  it('hands a message that needs nothing back without copying it', () => {
    const m = Buffer.from('Subject: x\r\n\r\nhello\r\n')
    const pieces = dataOf(m)
    assert.equal(pieces[0], m)
    assert.equal(text(pieces), 'Subject: x\r\n\r\nhello\r\n.\r\n')
  })

  it("takes a safe message's maker at its word, unless the message does not end its last line", () => {
    const m = Buffer.from('Subject: x\r\n\r\nhello\r\n')
    assert.deepEqual(dataOf(m, true), [m, Buffer.from('.\r\n')])
    // Vouched for, it is not searched: a dot that starts a line would go out single (hence the maker's check).
    assert.equal(text(dataOf(Buffer.from('a\r\n.b\r\n'), true)), 'a\r\n.b\r\n.\r\n')
    assert.equal(text(dataOf(Buffer.from('a\n.b'), true)), 'a\r\n..b\r\n.\r\n')
  })
})

for (const pipelining of [true, false]) {
  describe(`SMTP session, relay ${pipelining ? 'with' : 'without'} PIPELINING`, async () => {
    const relay = await startRelay({ pipelining })
    const session = await openSmtpSession({
      host: '127.0.0.1',
      port: relay.port,
      secure: false,
      rejectUnauthorized: false,
    })
    after(() => session.quit())

    it('delivers messages one after another, byte for byte, reporting refused recipients', async () => {
      const raw = Buffer.from('Subject: one\r\n\r\n.dot\r\nbare\nend\r\n')
      const r = await session.send('b@shop.example', ['a@x.cz', 'refused@x.cz'], raw)
      assert.deepEqual(r, { accepted: ['a@x.cz'], rejected: ['refused@x.cz'] })
      await session.send('b@shop.example', ['c@x.cz'], Buffer.from('Subject: two\r\n\r\nhi\r\n'))
      assert.deepEqual(
        relay.received.map((m) => [m.from, m.to, m.raw]),
        [
          ['b@shop.example', ['a@x.cz'], 'Subject: one\r\n\r\n.dot\r\nbare\r\nend\r\n'],
          ['b@shop.example', ['c@x.cz'], 'Subject: two\r\n\r\nhi\r\n'],
        ],
      )
    })

    it('takes messages given all at once in order, the next envelope written behind each message', async () => {
      const before = relay.received.length
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, n) =>
          session.send(
            'b@shop.example',
            [n % 5 === 3 ? `refused@x.cz` : `q${n}@x.cz`],
            Buffer.from(`${n % 7 === 5 ? 'X-Reject: yes\r\n' : ''}Subject: ${n}\r\n\r\n.${n}\r\n`),
          ),
        ),
      )
      const outcome = results.map((r, n) =>
        r.status === 'fulfilled' ? `q${n}` : (r.reason as { responseCode: number }).responseCode,
      )
      assert.deepEqual(outcome, ['q0', 'q1', 'q2', 550, 'q4', 554, 'q6', 'q7', 550, 'q9', 'q10', 'q11'])
      assert.deepEqual(
        relay.received.slice(before).map((m) => [m.to[0], m.raw]),
        [0, 1, 2, 4, 6, 7, 9, 10, 11].map((n) => [`q${n}@x.cz`, `Subject: ${n}\r\n\r\n.${n}\r\n`]),
      )
    })

    it('fails with the reply code when the sender, every recipient or the message is refused, and goes on', async () => {
      const before = relay.received.length
      const msg = Buffer.from('Subject: x\r\n\r\nx\r\n')
      await assert.rejects(session.send('blocked@shop.example', ['a@x.cz'], msg), {
        code: 'EENVELOPE',
        responseCode: 553,
      })
      await assert.rejects(session.send('b@shop.example', ['refused@x.cz'], msg), {
        code: 'EENVELOPE',
        responseCode: 550,
      })
      await assert.rejects(
        session.send('b@shop.example', ['a@x.cz'], Buffer.from('X-Reject: yes\r\n\r\nx\r\n')),
        { code: 'EMESSAGE', responseCode: 554 },
      )
      assert.equal(session.usable, true)
      await session.send('b@shop.example', ['d@x.cz'], msg)
      assert.equal(relay.received.length, before + 1)
      assert.deepEqual(relay.received.at(-1)?.to, ['d@x.cz'])
    })

    it('declares SMTPUTF8 for an address beyond ASCII, and only then', async () => {
      const before = relay.received.length
      const msg = Buffer.from('Subject: x\r\n\r\nx\r\n')
      await Promise.all([
        session.send('b@shop.example', ['jiří@x.cz'], msg),
        session.send('b@shop.example', ['e@x.cz'], msg),
      ])
      assert.deepEqual(
        relay.received.slice(before).map((m) => [m.to[0], m.smtpUtf8]),
        [
          ['jiří@x.cz', true],
          ['e@x.cz', false],
        ],
      )
    })

    it('refuses an address beyond ASCII when the relay offers no SMTPUTF8, writing nothing of it', async () => {
      const plain = await startRelay({ pipelining, smtpUtf8: false })
      const s = await openSmtpSession({
        host: '127.0.0.1',
        port: plain.port,
        secure: false,
        rejectUnauthorized: false,
      })
      after(() => s.quit())
      const msg = Buffer.from('Subject: x\r\n\r\nx\r\n')
      const results = await Promise.allSettled([
        s.send('b@shop.example', ['f@x.cz'], msg),
        s.send('b@shop.example', ['žofie@x.cz'], msg),
        s.send('b@shop.example', ['g@x.cz'], msg),
      ])
      assert.deepEqual(
        results.map((r) =>
          r.status === 'fulfilled' ? 'sent' : (r.reason as { responseCode: number }).responseCode,
        ),
        ['sent', 553, 'sent'],
      )
      assert.deepEqual(
        plain.received.map((m) => m.to[0]),
        ['f@x.cz', 'g@x.cz'],
      )
      assert.equal(s.usable, true)
    })
  })
}
