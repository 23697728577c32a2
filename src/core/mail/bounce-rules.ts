// Pure code, in core so that sending (modules/messages) classifies an SMTP reply without importing the bounces
// module, which imports messages (issue 11: no module cycle).
/**
 * Hard or soft: the one decision with lasting effect. A hard bounce sets the subscriber to status 4 and
 * suppresses the address account-wide until an explicit resubscribe; a soft bounce is only counted. A wrong
 * "hard" loses a good subscriber for good, a wrong "soft" costs a few more attempts. So every doubt here
 * falls on the soft side, and "hard" is kept for permanent failures that say the mailbox is gone.
 */
export type BounceClass = 'hard_bounce' | 'soft_bounce'

/**
 * Permanent (5.x.x) codes that say nothing bad about the address (RFC 3463 subjects and details):
 * - X.2.2 mailbox full: RFC 3463 allows it for "persistent transient" failures; it clears when the owner
 *   deletes mail, and mailbox providers disagree on 452 vs 552, so it is soft whatever the class digit.
 * - X.2.3 message length exceeds administrative limit, X.3.4 message too big for system: this message, not
 *   the mailbox.
 * - X.3.1 mail system full, X.3.2 system not accepting network messages: the receiving host, not the mailbox.
 * - X.4.7 delivery time expired: a relay gave up after its own retries of temporary failures.
 */
const SOFT_PERMANENT_DETAILS = new Set(['2.2', '2.3', '3.1', '3.2', '3.4', '4.7'])

/**
 * Wording that marks a 5xx as a quota, reputation, content or rate problem even when the code is generic
 * (Exim reports every failure as 5.0.0; many hosts reply a bare 550/554 to spam). It wins over the code,
 * because hosts pick codes loosely for blocks and quotas while the words say what actually happened.
 * Deliberately absent: the bare word "listed" ("User unknown; not listed in Domino Directory" is a real
 * unknown-user reply) and "temporary" ("this is not a temporary error").
 */
const SOFT_WORDING = new RegExp(
  [
    String.raw`\bspam`,
    String.raw`\bblocked\b`,
    String.raw`\b(?:block|black|deny)[ -]?list`,
    String.raw`\bspamhaus|\bspamcop|\bbarracuda|\bsorbs\b`,
    String.raw`\breputation\b`,
    String.raw`\brate[ -]?limit`,
    String.raw`\btoo many (?:messages|connections|recipients|emails|mails)\b`,
    String.raw`\btry (?:again )?(?:later|tomorrow)\b`,
    String.raw`\bquota\b`,
    String.raw`\bmailbox (?:is )?full\b|\bfull mailbox\b|\bmailbox has exceeded\b`,
    String.raw`\binsufficient (?:storage|space|system storage)\b`,
    String.raw`\bretry time(?:out)? (?:exceeded|expired)\b`,
  ].join('|'),
  'i',
)

/**
 * Codes about something other than the mailbox, soft unless the text plainly says the recipient does not exist
 * (some hosts misuse 5.7.1 for that, and sendmail reports an unknown user as 5.3.0):
 * - X.7.x (security or policy) rejects us or this message: DMARC, authentication, content filters,
 *   "RESOLVER.RST.AuthRequired" group restrictions;
 * - X.3.x (mail system status): the receiving system is full, misconfigured or lacks a feature;
 * - X.6.x (message content or media): this message's form, not where it went;
 * - X.4.3 directory server failure, X.4.6 routing loop: the way there, not the mailbox.
 */
const NOT_ABOUT_MAILBOX = { subjects: new Set(['3', '6', '7']), details: new Set(['4.3', '4.6']) }

/**
 * Wording of a policy, a content rule or a mailbox shut for a while: no statement that the mailbox is gone, so
 * soft whatever the code, unless the same text says the recipient does not exist ("User unknown (policy
 * violation)").
 */
const NOT_ABOUT_MAILBOX_WORDING = new RegExp(
  [
    String.raw`\btemporarily (?:disabled|suspended|unavailable|blocked|deferred)\b`,
    String.raw`\bpolicy (?:violation|reasons?)\b|\bcontent (?:restrictions?|filter|rejected)\b`,
  ].join('|'),
  'i',
)

/** Words that plainly say the recipient does not exist. */
const RECIPIENT_GONE = new RegExp(
  [
    String.raw`\buser unknown\b|\bunknown user\b`,
    String.raw`\bno such (?:user|mailbox|recipient|address)\b`,
    String.raw`\b(?:mailbox|user|account|recipient|address) (?:does not|doesn't) exist\b`,
    String.raw`\brecipient not found\b|\baddress not found\b`,
  ].join('|'),
  'i',
)

const ENHANCED_CODE = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/

/** The first RFC 3463 enhanced status code in a text ("5.1.1"); IP addresses and versions do not match. */
export function findEnhancedCode(text: string | undefined): string | undefined {
  const match = text ? ENHANCED_CODE.exec(text) : null
  return match ? `${match[1]}.${match[2]}.${match[3]}` : undefined
}

/**
 * Classifies a failed delivery by its enhanced status code and the text that came with it (diagnostic or
 * SMTP reply). 4.x.x is always soft; 5.x.x is hard unless one of the exceptions above applies. Any other
 * class (a malformed or 2.x.x status on a failure) is soft: we cannot prove the address is bad.
 */
export function classifyFailure(status: string, text = ''): BounceClass {
  const [klass, subject, detail] = status.split('.')
  if (klass !== '5') return 'soft_bounce'
  if (SOFT_WORDING.test(text)) return 'soft_bounce'
  if (SOFT_PERMANENT_DETAILS.has(`${subject}.${detail}`)) return 'soft_bounce'
  if (
    NOT_ABOUT_MAILBOX.subjects.has(`${subject}`) ||
    NOT_ABOUT_MAILBOX.details.has(`${subject}.${detail}`) ||
    NOT_ABOUT_MAILBOX_WORDING.test(text)
  )
    return RECIPIENT_GONE.test(text) ? 'hard_bounce' : 'soft_bounce'
  return 'hard_bounce'
}

/**
 * A synchronous reply to RCPT TO or DATA: 5xx is hard, 4xx (retried by the sender first) and anything
 * else (0 for a dropped connection) is soft. The enhanced code, when given or found in the reply text,
 * refines a 5xx with the same exceptions as DSNs; a 5xx whose enhanced code is not 5.x.x contradicts
 * itself (RFC 3463 requires the classes to agree) and is treated as soft.
 */
export function classifySmtpReply(code: number, enhanced?: string, message?: string): BounceClass {
  if (!Number.isInteger(code) || code < 500 || code > 599) return 'soft_bounce'
  const status = enhanced?.trim() || findEnhancedCode(message) || '5.0.0'
  return classifyFailure(status, message)
}

/**
 * Exim (and some others) put a generic X.0.0 in Status and the real code only in the diagnostic
 * ("Status: 5.0.0", "550 5.1.1 ... User unknown"). The specific code of the same class is the better one.
 */
export function refineStatus(status: string | undefined, diagnostic: string | undefined): string | undefined {
  const fromText = findEnhancedCode(diagnostic)
  if (!status) return fromText ?? replyClassStatus(diagnostic)
  if (/^\d\.0\.0$/.test(status) && fromText && fromText[0] === status[0] && !fromText.endsWith('.0.0')) {
    return fromText
  }
  return status
}

/** "550 Requested action not taken" with no enhanced code: the reply code's class as X.0.0. */
function replyClassStatus(text: string | undefined): string | undefined {
  const match = text ? /(?<!\d)([245])\d\d(?![\d.])/.exec(text) : null
  return match ? `${match[1]}.0.0` : undefined
}
