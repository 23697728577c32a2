import { first, type Fields } from './report-fields.js'

/**
 * Out-of-office and vacation replies. They come back to the envelope sender (RFC 3834 tells responders to
 * reply there), so they reach the bounce listener, but they prove the mailbox works: never a bounce.
 *
 * Subjects of the common responders (Outlook/Exchange in several languages, Gmail, Sieve vacation,
 * Zimbra, cPanel). Anchored at the start, where responders put their prefix before the original subject.
 */
const AUTO_REPLY_SUBJECT = new RegExp(
  [
    String.raw`^\s*(?:auto(?:matic|matische)?[ -]?(?:reply|response|antwort|answer))\b`,
    String.raw`^\s*out of (?:the )?office\b`,
    String.raw`^\s*(?:abwesenheitsnotiz|abwesend)\b`,
    String.raw`^\s*automatick[áa] odpov[ěe][ďd]`,
    String.raw`^\s*(?:r[ée]ponse automatique|absence)\b`,
    String.raw`^\s*(?:respuesta autom[áa]tica|risposta automatica|odpowied[źz] automatyczna)\b`,
    String.raw`^\s*(?:on vacation|vacation reply|away from (?:the )?office)\b`,
  ].join('|'),
  'i',
)

/** The subject alone says auto-reply; checked before plain-text bounce wording, which it outranks. */
export function hasAutoReplySubject(subject: string | undefined): boolean {
  return !!subject && AUTO_REPLY_SUBJECT.test(subject)
}

/**
 * The headers say the message was machine-made: Auto-Submitted other than "no" (RFC 3834), the
 * non-standard X-Autoreply / X-Autorespond family, Precedence: auto_reply. Bounces carry Auto-Submitted
 * too (Postfix, Exim, Gmail), so this is checked only after the DSN and plain-text bounce readings.
 */
export function hasAutoReplyHeaders(headers: Fields): boolean {
  const autoSubmitted = first(headers, 'auto-submitted')?.toLowerCase()
  if (autoSubmitted && !autoSubmitted.startsWith('no')) return true
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponse', 'x-autoreply-from']) {
    if (headers.has(name)) return true
  }
  return first(headers, 'precedence')?.toLowerCase() === 'auto_reply'
}
