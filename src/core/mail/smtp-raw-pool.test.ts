import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { createRawSmtpPool } from './smtp-raw-pool.js'
import { createSmtpMailer } from './smtp.js'

/** A relay that wants a login, counts its sessions and keeps every message byte for byte. */
async function startRelay() {
  const received: { to: string[]; raw: string }[] = []
  let sessions = 0
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 500,
    onConnect(_session, cb) {
      sessions++
      cb()
    },
    onAuth(auth, _session, cb) {
      if (auth.username === 'tidings' && auth.password === 'p@ss word') return cb(null, { user: 'tidings' })
      cb(new Error('bad login'))
    },
    onRcptTo(address, _session, cb) {
      if (address.address.startsWith('refused@'))
        return cb(Object.assign(new Error('no such user'), { responseCode: 550 }))
      if (address.address.startsWith('later@'))
        return cb(Object.assign(new Error('try later'), { responseCode: 451 }))
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString(),
        })
        cb()
      })
    },
  })
  server.on('error', () => undefined)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    sessions: () => sessions,
  }
}

const message = (n: number) =>
  Buffer.from(
    `From: news@shop.example\r\nTo: r${n}@example.cz\r\nSubject: ${n}\r\n\r\n` +
      // A line starting with a dot must arrive as it was (the client stuffs it, the server unstuffs it).
      `Hello ${n}\r\n.\r\n..two dots\r\nend\r\n`,
  )

/** A pool to 127.0.0.1 without TLS. */
const poolTo = (port: number, maxConnections: number, auth?: { user: string; pass: string }) =>
  createRawSmtpPool({
    host: '127.0.0.1',
    port,
    secure: false,
    auth,
    rejectUnauthorized: false,
    maxConnections,
  })

describe('raw SMTP pool', async () => {
  const relay = await startRelay()
  const pool = poolTo(relay.port, 3, { user: 'tidings', pass: 'p@ss word' })
  after(() => pool.close())

  it('logs in and delivers concurrent messages byte for byte over at most maxConnections sessions', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        pool.send(
          { from: 'bounces+x@shop.example', to: [`r${n}@example.cz`] },
          message(n),
          `<${n}@shop.example>`,
        ),
      ),
    )
    assert.deepEqual(
      results.map((r) => r.accepted),
      Array.from({ length: 40 }, (_, n) => [`r${n}@example.cz`]),
    )
    assert.equal(results[7]!.messageId, '<7@shop.example>')
    assert.equal(relay.received.length, 40)
    for (const m of relay.received) {
      const n = Number(/^Subject: (\d+)/m.exec(m.raw)![1])
      assert.equal(m.raw, message(n).toString())
      assert.deepEqual(m.to, [`r${n}@example.cz`])
    }
    assert.ok(relay.sessions() <= 3, `${relay.sessions()} sessions`)
  })

  it('keeps no reference to a message once sendRaw settles: its memory, filled at once, arrived unchanged', async () => {
    // The sender writes the next messages into the same memory (signer.release); megabytes each, so that
    // a mailer settling before the bytes left would still have them queued on its socket.
    const mailer = createSmtpMailer({ url: `smtp://tidings:p%40ss%20word@127.0.0.1:${relay.port}` })
    const big = (n: number) =>
      Buffer.from(
        `From: news@shop.example\r\nSubject: big ${n}\r\n\r\n${`${n}`.repeat(74).slice(0, 74)}\r\n`.repeat(
          25_000,
        ),
      )
    const before = relay.received.length
    try {
      await Promise.all(
        Array.from({ length: 4 }, async (_, n) => {
          const raw = big(n)
          const sent = await mailer.sendRaw(
            { from: 'b@shop.example', to: [`big${n}@example.cz`] },
            raw,
            `<b${n}@x>`,
            {
              dataSafe: true,
            },
          )
          raw.fill(0x41)
          assert.deepEqual(sent.accepted, [`big${n}@example.cz`])
        }),
      )
    } finally {
      // Closed whether the sends passed or not: an open session would keep the test process from ending.
      await mailer.close()
    }
    const arrived = relay.received.slice(before)
    assert.equal(arrived.length, 4)
    for (const m of arrived) {
      const n = Number(/^Subject: big (\d+)/m.exec(m.raw)![1])
      assert.ok(m.raw === big(n).toString(), `message ${n} arrived changed`)
    }
  })

  it('reports a refused recipient with its reply code and keeps the session for the next message', async () => {
    const before = relay.sessions()
    await assert.rejects(
      pool.send({ from: 'b@shop.example', to: ['refused@example.cz'] }, message(1), '<r@shop.example>'),
      (err: { responseCode?: number }) => err.responseCode === 550,
    )
    await assert.rejects(
      pool.send({ from: 'b@shop.example', to: ['later@example.cz'] }, message(2), '<l@shop.example>'),
      (err: { responseCode?: number }) => err.responseCode === 451,
    )
    const ok = await pool.send(
      { from: 'b@shop.example', to: ['fine@example.cz'] },
      message(3),
      '<f@shop.example>',
    )
    assert.deepEqual(ok.accepted, ['fine@example.cz'])
    assert.equal(relay.sessions(), before, 'no new session was needed')
  })

  it('fails a send when the relay cannot be reached, and refuses sends once closed', async () => {
    const nowhere = poolTo(1, 2)
    await assert.rejects(
      nowhere.send({ from: 'b@x.cz', to: ['a@x.cz'] }, message(1), '<1@x>'),
      /ECONNREFUSED/,
    )
    await nowhere.close()
    await assert.rejects(nowhere.send({ from: 'b@x.cz', to: ['a@x.cz'] }, message(1), '<1@x>'), /closed/)
  })

  it('refuses a wrong login', async () => {
    const wrong = poolTo(relay.port, 1, { user: 'tidings', pass: 'nope' })
    after(() => wrong.close())
    await assert.rejects(
      wrong.send({ from: 'b@x.cz', to: ['a@x.cz'] }, message(1), '<1@x>'),
      /Invalid login|bad login/,
    )
  })
})
