import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { classifyInbound, classifySmtpReply, type InboundReport } from './classify.js'
import { parseVerpAddress } from '../../core/mail/verp.js'

/** The secret the fixture VERP tokens were signed with. */
const FIXTURE_SECRET = 'fixture-verp-secret'
const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/bounces')

interface Expected {
  kind: InboundReport['kind']
  recipient: string | null
  status: string | null
  /** The message reference of the VERP envelope sender found in the report; null when it includes none. */
  messageRef: string | null
}

const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string,
  Expected
>
const fixtures = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.eml'))
const read = (file: string) => fs.readFileSync(path.join(FIXTURES, file))

describe('bounce fixture corpus', () => {
  it('has an expectation for every fixture and a fixture for every expectation', () => {
    assert.deepEqual([...fixtures].sort(), Object.keys(expected).sort())
  })

  for (const file of fixtures) {
    it(`classifies ${file}`, async () => {
      const want = expected[file]
      assert.ok(want)
      const got = await classifyInbound(read(file))
      assert.equal(got.kind, want.kind)
      assert.equal(got.recipient ?? null, want.recipient)
      assert.equal(got.status ?? null, want.status)
      const ref = got.originalEnvelopeFrom ? parseVerpAddress(FIXTURE_SECRET, got.originalEnvelopeFrom) : null
      assert.equal(ref, want.messageRef)
      if (got.diagnostic !== undefined) {
        assert.doesNotMatch(got.diagnostic, /[\r\n]/)
        assert.ok(got.diagnostic.length <= 500)
      }
      if (want.kind !== 'unknown' || got.originalMessageId) {
        assert.match(got.originalMessageId ?? '', /^<[^<>\s]+@tidings\.test>$/)
      }
    })
  }

  it('reads the corpus the same with CRLF line ends, as SMTP delivers it', async () => {
    for (const file of fixtures) {
      const crlf = read(file).toString('utf8').replace(/\r?\n/g, '\r\n')
      assert.deepEqual(await classifyInbound(crlf), await classifyInbound(read(file)), file)
    }
  })

  it('reads replies that include no original: they come back to the VERP address itself', async () => {
    for (const file of fixtures.filter((f) => expected[f]?.messageRef === null)) {
      const to = /^To: .*?<?(bounces\+[^\s<>]+)>?$/m.exec(read(file).toString('utf8'))?.[1] ?? ''
      assert.ok(parseVerpAddress(FIXTURE_SECRET, to), `${file} is addressed to a valid VERP address`)
    }
  })

  it('keeps the useful parts of the diagnostics', async () => {
    const gmail = await classifyInbound(read('gmail-dsn.eml'))
    assert.equal(
      gmail.diagnostic,
      "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser a640c23a62f3a-ab2c90c3d1esi812345a66b.117 - gsmtp",
    )
    const exim = await classifyInbound(read('exim-failure.eml'))
    assert.equal(exim.status, '5.1.1', 'Exim says 5.0.0; the diagnostic says 5.1.1')
    const ndr = await classifyInbound(read('exchange-legacy-plaintext.eml'))
    assert.equal(ndr.diagnostic, '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found')
    const arf = await classifyInbound(read('arf-yahoo-abuse.eml'))
    assert.equal(arf.feedbackType, 'abuse')
  })
})

/** A DSN as Postfix lays it out, with the parts under test replaced. */
function dsn(recipientBlocks: string[], perMessage = 'Reporting-MTA: dns; mx.example.org'): string {
  return [
    'From: MAILER-DAEMON@mx.example.org (Mail Delivery System)',
    'To: bounces+x.y@bounce.tidings.test',
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'The mail system',
    '',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    perMessage,
    '',
    recipientBlocks.join('\n\n'),
    '',
    '--b1',
    'Content-Type: text/rfc822-headers',
    '',
    'Received: from mta1.tidings.test by relay.example.org (Exim 4.96)',
    '\t(envelope-from <bounces+from.received@bounce.tidings.test>)',
    '\tid 1tXa7a-000Abb-3L; Tue, 14 Jan 2025 11:02:09 +0100',
    'To: header.to@example.org',
    'Message-ID: <orig@tidings.test>',
    '',
    '--b1--',
    '',
  ].join('\r\n')
}

const failed = (status: string, diagnostic: string, rcpt = 'jan@example.org') =>
  `Final-Recipient: rfc822; ${rcpt}\nAction: failed\nStatus: ${status}\nDiagnostic-Code: smtp; ${diagnostic}`

describe('DSN classification rules', () => {
  const kindOf = async (raw: string) => (await classifyInbound(raw)).kind

  it('5.x.x failures are hard, 4.x.x soft, and a delay no bounce', async () => {
    assert.equal(await kindOf(dsn([failed('5.1.2', '550 5.1.2 Host unknown')])), 'hard_bounce')
    assert.equal(await kindOf(dsn([failed('5.2.1', '550 5.2.1 Mailbox disabled')])), 'hard_bounce')
    // Postfix gives up on a 4xx after its queue lifetime with Action: failed and the 4.x.x status kept.
    assert.equal(await kindOf(dsn([failed('4.4.1', 'X-Postfix; connect to mx: timed out')])), 'soft_bounce')
    const delayed = 'Final-Recipient: rfc822; jan@example.org\nAction: delayed\nStatus: 4.2.0'
    assert.equal(await kindOf(dsn([delayed])), 'delayed')
  })

  it('permanent codes about the message or the host, not the mailbox, are soft', async () => {
    for (const [status, text] of [
      ['5.2.2', '552 5.2.2 Requested mail action aborted'],
      ['5.3.4', '552 5.3.4 Message size exceeds fixed limit'],
      ['5.4.7', '550 5.4.7 Delivery time expired'],
      ['5.0.0', '552 Requested mail action aborted: exceeded storage allocation; over quota'],
      ['5.0.0', 'retry timeout exceeded'],
      ['5.1.1', '550 5.1.1 Message rejected as spam by Content Filtering'],
      ['5.3.0', '550 5.3.0 Other or undefined mail system status'],
      ['5.3.5', '554 5.3.5 System incorrectly configured'],
      ['5.4.6', '554 5.4.6 Routing loop detected'],
      ['5.6.0', '554 5.6.0 Message contains invalid header'],
      ['5.0.0', '550 Message rejected: policy violation'],
      ['5.0.0', '554 Rejected due to content restrictions'],
      ['5.2.1', '550 5.2.1 Mailbox temporarily disabled, try again tomorrow'],
    ]) {
      assert.equal(await kindOf(dsn([failed(status ?? '', text ?? '')])), 'soft_bounce', text)
    }
  })

  it('policy, system and content codes are soft unless they say the recipient does not exist', async () => {
    const soft = [
      '550 5.7.1 Delivery not authorized, message refused',
      '550 5.7.26 Unauthenticated email from shop.example.com is not accepted due to DMARC policy',
      '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required',
      '421-4.7.28 Gmail has detected an unusual rate of unsolicited mail',
    ]
    for (const text of soft) assert.equal(await kindOf(dsn([failed('5.7.1', text)])), 'soft_bounce', text)
    const gone = '550 5.7.1 <jan@example.org>: Recipient address rejected: User unknown'
    assert.equal(await kindOf(dsn([failed('5.7.1', gone)])), 'hard_bounce')
    // sendmail's unknown user.
    const sendmail = '550 5.3.0 <jan@example.org>... User unknown'
    assert.equal(await kindOf(dsn([failed('5.3.0', sendmail)])), 'hard_bounce')
    for (const [status, text] of [
      ['5.0.0', '550 5.0.0 User unknown (policy violation)'],
      ['5.1.1', '550 5.1.1 Recipient address rejected: User unknown; content filter'],
    ])
      assert.equal(await kindOf(dsn([failed(status ?? '', text ?? '')])), 'hard_bounce', text)
  })

  it('the unknown-user wording of Domino ("not listed") stays hard', async () => {
    const text = '550 5.1.1 User unknown; not listed in Domino Directory'
    assert.equal(await kindOf(dsn([failed('5.1.1', text)])), 'hard_bounce')
  })

  it('success notices and reports without a recipient are not bounces', async () => {
    const delivered = 'Final-Recipient: rfc822; jan@example.org\nAction: delivered\nStatus: 2.0.0'
    assert.equal(await kindOf(dsn([delivered])), 'unknown')
    assert.equal(await kindOf(dsn([])), 'unknown')
  })

  it('with several recipients the failed one is reported', async () => {
    const report = await classifyInbound(
      dsn([
        'Final-Recipient: rfc822; ok@example.org\nAction: delayed\nStatus: 4.4.1',
        failed('5.1.1', '550 5.1.1 User unknown', 'gone@example.org'),
      ]),
    )
    assert.deepEqual(
      [report.kind, report.recipient, report.status],
      ['hard_bounce', 'gone@example.org', '5.1.1'],
    )
  })

  it('prefers Original-Recipient (what we sent to) over Final-Recipient (after forwarding)', async () => {
    const block = `Original-Recipient: rfc822;jan@example.org\n${failed('5.1.1', '550 5.1.1 No such user', 'jan.n@internal.example.org')}`
    assert.equal((await classifyInbound(dsn([block]))).recipient, 'jan@example.org')
  })

  it('takes the status from the diagnostic when the Status field is missing or generic', async () => {
    const noStatus =
      'Final-Recipient: rfc822; jan@example.org\nAction: failed\nDiagnostic-Code: smtp; 550 No such user here'
    const bare = await classifyInbound(dsn([noStatus]))
    assert.deepEqual([bare.kind, bare.status], ['hard_bounce', '5.0.0'])
    const generic = await classifyInbound(
      dsn([failed('5.0.0', '550 5.1.1 <jan@example.org>... User unknown')]),
    )
    assert.deepEqual([generic.kind, generic.status], ['hard_bounce', '5.1.1'])
    const otherClass = await classifyInbound(dsn([failed('5.0.0', '550 4.2.0 odd server')]))
    assert.equal(otherClass.status, '5.0.0', 'a code of another class does not replace the Status')
  })

  it('finds the envelope sender in Received when the returned headers have no Return-Path', async () => {
    const report = await classifyInbound(dsn([failed('5.1.1', '550 5.1.1 User unknown')]))
    assert.equal(report.originalEnvelopeFrom, 'bounces+from.received@bounce.tidings.test')
    assert.equal(report.originalMessageId, '<orig@tidings.test>')
  })

  it('reads a diagnostic in its declared charset, without control characters', async () => {
    // "Uživatel neexistuje" in ISO-8859-2 (ž is 0xBE there), with a NUL, which PostgreSQL stores in no text.
    const text = dsn([failed('5.1.1', '550 5.1.1 U\u00beivatel neexistuje\u0000 (bad)')]).replace(
      'Content-Type: message/delivery-status',
      'Content-Type: message/delivery-status; charset=iso-8859-2',
    )
    const report = await classifyInbound(Buffer.from(text, 'latin1'))
    assert.equal(report.kind, 'hard_bounce')
    assert.equal(report.diagnostic, '550 5.1.1 U\u017eivatel neexistuje (bad)')
  })

  it('bounds the diagnostic to one line of at most 500 characters', async () => {
    const long = `550 5.1.1 ${'very long reason '.repeat(60)}`
    const report = await classifyInbound(dsn([failed('5.1.1', long.replace(/reason /g, 'reason\n '))]))
    assert.equal(report.diagnostic?.length, 500)
    assert.doesNotMatch(report.diagnostic ?? '', /\n/)
  })
})

/** An ARF report with the given feedback-report fields. */
function arf(fields: string): string {
  return [
    'From: fbl@isp.example',
    'To: fbl@bounce.tidings.test',
    'Subject: Abuse report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report.',
    '--b2',
    'Content-Type: message/feedback-report',
    '',
    fields,
    '--b2',
    'Content-Type: message/rfc822',
    '',
    'Return-Path: <bounces+a.b@bounce.tidings.test>',
    'To: Reader <reader@isp.example>',
    'Message-ID: <m@tidings.test>',
    '',
    'body',
    '--b2--',
    '',
  ].join('\r\n')
}

describe('ARF classification rules', () => {
  it('abuse, fraud and other are complaints; the recipient falls back to the original To', async () => {
    for (const type of ['abuse', 'fraud', 'other', 'Abuse']) {
      const report = await classifyInbound(arf(`Feedback-Type: ${type}\nUser-Agent: FBL/1\nVersion: 1`))
      assert.deepEqual(report, {
        kind: 'complaint',
        recipient: 'reader@isp.example',
        originalMessageId: '<m@tidings.test>',
        originalEnvelopeFrom: 'bounces+a.b@bounce.tidings.test',
        feedbackType: type.toLowerCase(),
      })
    }
  })

  it('not-spam, auth-failure (DMARC forensic), virus and untyped reports are no complaints', async () => {
    for (const fields of [
      'Feedback-Type: not-spam',
      'Feedback-Type: auth-failure',
      'Feedback-Type: virus',
      'Version: 1',
    ]) {
      assert.equal((await classifyInbound(arf(fields))).kind, 'unknown', fields)
    }
  })

  it('Original-Mail-From and Original-Rcpt-To outrank the included headers', async () => {
    const report = await classifyInbound(
      arf(
        'Feedback-Type: abuse\nOriginal-Mail-From: <bounces+c.d@bounce.tidings.test>\nOriginal-Rcpt-To: <r@isp.example>',
      ),
    )
    assert.equal(report.originalEnvelopeFrom, 'bounces+c.d@bounce.tidings.test')
    assert.equal(report.recipient, 'r@isp.example')
  })
})

/** A single-part message with the given headers and text. */
const simple = (headers: string[], body: string) =>
  [...headers, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', body, ''].join('\r\n')

describe('replies and plain-text bounces', () => {
  it('a person quoting an SMTP error is no bounce', async () => {
    const raw = simple(
      ['From: Jan <jan@example.org>', 'Subject: Re: January offers', 'In-Reply-To: <o@tidings.test>'],
      'My old address gave "550 5.1.1 User unknown", use this one.',
    )
    assert.deepEqual(await classifyInbound(raw), { kind: 'unknown', originalMessageId: '<o@tidings.test>' })
  })

  it('a person replying about a bounce is no bounce, though the subject says "Undeliverable"', async () => {
    const raw = simple(
      ['From: Jan <jan@example.org>', 'Subject: RE: Undeliverable: January offers'],
      'Why did I get this? It says #550 5.1.1 RESOLVER.ADR.RecipNotFound',
    )
    assert.equal((await classifyInbound(raw)).kind, 'unknown')
  })

  it('a mailer daemon without any SMTP code is unknown, not a guessed bounce', async () => {
    const raw = simple(
      ['From: MAILER-DAEMON@mx.example.org', 'Subject: Returned mail'],
      'Something went wrong.',
    )
    assert.equal((await classifyInbound(raw)).kind, 'unknown')
  })

  it('an auto-reply subject wins over bounce wording in the body', async () => {
    const raw = simple(
      [
        'From: Eva <eva@example.org>',
        'Subject: Automatic reply: Delivery failure notice',
        'Auto-Submitted: auto-replied',
      ],
      'I am away. (Our server said 550 5.1.1 last week, ignore that.)',
    )
    assert.equal((await classifyInbound(raw)).kind, 'auto_reply')
  })

  it('auto-reply headers alone mark an auto-reply; Auto-Submitted: no does not', async () => {
    const from = 'From: Eva <eva@example.org>'
    for (const header of ['X-Autoreply: yes', 'Precedence: auto_reply', 'Auto-Submitted: auto-replied']) {
      const raw = simple([from, 'Subject: Re: January offers', header], 'Thanks!')
      assert.equal((await classifyInbound(raw)).kind, 'auto_reply', header)
    }
    const raw = simple([from, 'Subject: Re: January offers', 'Auto-Submitted: no'], 'Thanks!')
    assert.equal((await classifyInbound(raw)).kind, 'unknown')
  })

  it('a plain-text 4xx bounce is soft and X-Failed-Recipients names the recipient', async () => {
    const raw = simple(
      [
        'From: Mail Delivery System <Mailer-Daemon@mx.example.cz>',
        'Subject: Mail delivery failed: returning message to sender',
        'X-Failed-Recipients: petr@example.cz',
      ],
      'host mx.example.cz said: 451 4.3.0 Temporary lookup failure for <someone@else.example>',
    )
    const report = await classifyInbound(raw)
    assert.deepEqual(
      [report.kind, report.recipient, report.status],
      ['soft_bounce', 'petr@example.cz', '4.3.0'],
    )
  })

  it('a plain-text delay warning is no bounce, by its subject or its text', async () => {
    const exim = simple(
      [
        'From: Mail Delivery System <Mailer-Daemon@mx.example.cz>',
        'Subject: Warning: message 1tXyZ2-0003Ab-7Q delayed 24 hours',
        'X-Failed-Recipients: petr@example.cz',
      ],
      'A message that you sent has not yet been delivered to one or more of its recipients after more than\n' +
        '24 hours on the queue.\n\n  petr@example.cz\n    host mx.example.cz said: 451 4.7.1 Greylisted\n\n' +
        'No action is required on your part. Delivery attempts will continue for some time.',
    )
    assert.equal((await classifyInbound(exim)).kind, 'delayed')
    const byText = simple(
      ['From: MAILER-DAEMON@mx.example.org', 'Subject: Returned mail'],
      'host said: 452 4.2.2 Mailbox full. Delivery attempts will continue.',
    )
    assert.equal((await classifyInbound(byText)).kind, 'delayed')
    // A permanent failure under a warning subject is still a bounce.
    const hard = simple(
      ['From: MAILER-DAEMON@mx.example.org', 'Subject: Warning: could not deliver'],
      'host said: 550 5.1.1 User unknown',
    )
    assert.equal((await classifyInbound(hard)).kind, 'hard_bounce')
  })

  it('never throws: empty, binary and header-only input is unknown', async () => {
    for (const raw of ['', '\u0000\u0001\u0002', 'Subject: x', Buffer.from([0xff, 0xfe, 0x00, 0x41])]) {
      assert.equal((await classifyInbound(raw)).kind, 'unknown')
    }
  })
})

describe('synchronous SMTP replies', () => {
  it('5xx is hard, 4xx and anything else soft, with the DSN exceptions for 5xx', () => {
    const cases: [number, string | undefined, string | undefined, string][] = [
      [550, '5.1.1', undefined, 'hard_bounce'],
      [550, undefined, undefined, 'hard_bounce'],
      [554, undefined, '554 5.1.1 <x@y>: Recipient address rejected: User unknown', 'hard_bounce'],
      [450, '4.2.1', undefined, 'soft_bounce'],
      [421, '4.7.0', 'Try again later', 'soft_bounce'],
      [552, '5.2.2', 'Mailbox full', 'soft_bounce'],
      [550, '4.1.1', undefined, 'soft_bounce'],
      [554, '5.7.1', 'Client host blocked using zen.spamhaus.org', 'soft_bounce'],
      [550, '5.7.1', 'Message rejected due to content restrictions', 'soft_bounce'],
      [0, undefined, 'Connection closed', 'soft_bounce'],
      [250, undefined, undefined, 'soft_bounce'],
    ]
    for (const [code, enhanced, message, want] of cases) {
      assert.equal(classifySmtpReply(code, enhanced, message), want, `${code} ${enhanced} ${message}`)
    }
  })
})
