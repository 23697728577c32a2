import { classifyFailure } from '../../core/mail/bounce-rules.js'
import { cleanDiagnostic, type InboundReport } from './inbound-report.js'
import {
  addressOf,
  envelopeFromReceived,
  first,
  messageIdOf,
  parseFields,
  type Fields,
} from './report-fields.js'

/**
 * Bounces without a message/delivery-status part: qmail's "failure notice", Exchange 2003-2010 text NDRs,
 * old Exim and Sendmail. Read conservatively, since a wrong reading suppresses a subscriber: the message
 * must come from a mailer daemon or carry a bounce subject, AND its report text must hold an SMTP code.
 * A person's mail quoting "550 mailbox unavailable" satisfies neither.
 */
const DAEMON_SENDER = /^(?:mailer-daemon|mail-daemon|postmaster|mailer|mmdf)@/i
const DAEMON_NAME = /\b(?:mail delivery (?:system|subsystem)|mailer[- ]daemon|system administrator)\b/i
const BOUNCE_SUBJECT = new RegExp(
  [
    String.raw`undeliver(?:able|ed)`,
    String.raw`delivery (?:status notification|failure|failed|has failed|problem|notification)`,
    String.raw`returned mail|returning message|mail delivery failed|failure notice`,
    String.raw`non[- ]?delivery|could not be delivered|nicht zustellbar|nedoru[čc]iteln`,
  ].join('|'),
  'i',
)
/**
 * A warning that the mail waits in a queue ("Warning: message ... delayed 24 hours", "delivery attempts will
 * continue"): with a 4xx code it is no bounce (see classifyRecipient's `delayed`).
 */
const DELAY_SUBJECT = /\b(?:delay(?:ed)?|warning)\b/i
const DELAY_TEXT =
  /has not yet been delivered|delivery attempts will continue|will (?:continue to )?(?:retry|try again)|still trying|no action is required on your part/i

/** "Re: Undeliverable: ..." is a person writing about a bounce, not a bounce. */
const REPLY_PREFIX = /^\s*(?:re|fwd?|aw|wg|odp|tr|sv|vs)\s*:/i

/**
 * Where the report ends and the returned copy begins, so a code in the copied original never counts.
 * The copy is still read for its headers (envelope sender, Message-ID).
 */
const COPY_MARKERS =
  /^(?:-+ ?Below this line is a copy of the message\.?|Original message headers:|-+ ?This is a copy of the message.*|-+ ?Original message -+|-+ ?Original Message -+|-+ ?The header of the original message is following\.? -+|-+ ?Returned mail follows -+|-+ ?Original message follows\.? -+)\s*$/im

/** "550 5.1.1", "#550 5.1.1", "(#5.1.1)", "said: 550 ..." in that order of trust. */
const REPLY_WITH_ENHANCED = /(?<![\d.])([45])\d\d[ -]([45]\.\d{1,3}\.\d{1,3})(?!\.?\d)/
const HASH_ENHANCED = /#([45]\.\d{1,3}\.\d{1,3})(?!\.?\d)/
const KEYWORD_REPLY = /\b(?:said|reason|error|response|replied)\s*:\s*([45])\d\d\b/i
const EMAIL =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+/g

export interface PlainTextInput {
  fromAddress?: string
  fromName?: string
  subject?: string
  text?: string
  headers: Fields
}

export function readPlainTextBounce(input: PlainTextInput): InboundReport | undefined {
  const fromDaemon =
    (!!input.fromAddress && DAEMON_SENDER.test(input.fromAddress)) ||
    (!!input.fromName && DAEMON_NAME.test(input.fromName))
  const bounceSubject =
    !!input.subject && BOUNCE_SUBJECT.test(input.subject) && !REPLY_PREFIX.test(input.subject)
  if (!fromDaemon && !bounceSubject) return undefined
  const text = input.text ?? ''
  const marker = COPY_MARKERS.exec(text)
  const report = marker ? text.slice(0, marker.index) : text
  const found = findCode(report)
  if (!found) return undefined

  const copied = marker ? parseFields(text.slice(marker.index + marker[0].length).trimStart()) : undefined
  const diagnostic = cleanDiagnostic(lineAround(report, found.index))
  const delayed =
    found.status.startsWith('4') && (DELAY_SUBJECT.test(input.subject ?? '') || DELAY_TEXT.test(report))
  return {
    kind: delayed ? 'delayed' : classifyFailure(found.status, diagnostic),
    recipient:
      addressOf(first(input.headers, 'x-failed-recipients')) ??
      recipientNear(report, found.index) ??
      addressOf(first(copied, 'to')),
    status: found.status,
    diagnostic,
    originalMessageId: messageIdOf(first(copied, 'message-id')),
    originalEnvelopeFrom:
      addressOf(first(copied, 'return-path')) ?? envelopeFromReceived(copied?.get('received') ?? []),
  }
}

function findCode(text: string): { status: string; index: number } | undefined {
  const full = REPLY_WITH_ENHANCED.exec(text)
  if (full?.[2]) return { status: full[2], index: full.index }
  const hash = HASH_ENHANCED.exec(text)
  if (hash?.[1]) return { status: hash[1], index: hash.index }
  const bare = KEYWORD_REPLY.exec(text)
  if (bare?.[1]) return { status: `${bare[1]}.0.0`, index: bare.index }
  return undefined
}

/** The line holding the code, without Exchange's "#...##" decoration. */
function lineAround(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index - 1) + 1
  const end = text.indexOf('\n', index)
  return text
    .slice(start, end < 0 ? undefined : end)
    .trim()
    .replace(/^#/, '')
    .replace(/\s*##$/, '')
}

/**
 * Reports name the failed address just before the reason ("<a@b>:" then "Sorry, no mailbox here"), so the
 * last address before the code wins, then the first after it. Our own VERP sender is never the answer.
 */
function recipientNear(text: string, index: number): string | undefined {
  const candidates = [...text.matchAll(EMAIL)]
    .filter((m) => !/^bounces\+/i.test(m[0]) && !DAEMON_SENDER.test(m[0]))
    .map((m) => ({ address: m[0], at: m.index }))
  const before = candidates.filter((c) => c.at < index)
  return (before[before.length - 1] ?? candidates.find((c) => c.at > index))?.address
}
