import type { MailAddress, OutgoingMail } from '../../core/mail/mailer.js'
import { escapeHtml } from '../../core/mail/merge-tags.js'
import { htmlToTextPart } from '../../core/mail/text-part.js'

/** What the confirmation mail is made of: the list's settings and the person asked to confirm. */
export interface ConfirmationMailInput {
  list: {
    name: string
    fromName: string
    fromEmail: string
    replyTo: string
    confSubject: string
    confMessage: string
  }
  contact: { email: string; name: string; surname: string }
  link: string
  /** MAIL_FROM, used when the list has no from_email of its own. */
  fallbackFrom: string
}

// `*|CONFIRM|*` in any case, also in its raw form `{*|CONFIRM|*}` and with the pipes percent-encoded, as
// HTML editors write it inside href attributes; `*|SUBCONFIRM|*` too, the name Ecomail's documentation gives
// it (lists moved over carry it in conf_message).
const CONFIRM_TAG = /\{\*(?:\||%7C)(?:SUB)?CONFIRM(?:\||%7C)\*\}|\*(?:\||%7C)(?:SUB)?CONFIRM(?:\||%7C)\*/gi

export function composeConfirmationMail(input: ConfirmationMailInput): OutgoingMail {
  const { list, contact } = input
  const fallback = parseAddress(input.fallbackFrom)
  const from: MailAddress = list.fromEmail
    ? { name: list.fromName || list.name, address: list.fromEmail }
    : { name: list.fromName || fallback.name || list.name, address: fallback.address }
  const html = confirmationHtml(list.name, list.confMessage, input.link)
  const text = htmlToTextPart(html)
  const mail: OutgoingMail = {
    from,
    to: [{ name: `${contact.name} ${contact.surname}`.trim(), address: contact.email }],
    subject: list.confSubject.trim() || `Please confirm your subscription to ${list.name}`,
    html,
    // A converter can lose a link hidden in odd markup; the text part must carry it whatever the HTML.
    text: text.includes(input.link) ? text : `${text}\n\n${input.link}`.trim(),
  }
  // compose.ts keeps From, To, Subject and headers single-line; Reply-To is passed through as given.
  const replyTo = list.replyTo.replace(/[\r\n]+/g, '').trim()
  if (replyTo) mail.replyTo = replyTo
  return mail
}

/** The list's conf_message with the link in place of every CONFIRM tag, or a default when it is empty. */
export function confirmationHtml(listName: string, confMessage: string, link: string): string {
  const href = escapeHtml(link)
  if (!confMessage.trim()) {
    return (
      '<!doctype html><html><body>' +
      `<p>Please confirm that you want to receive mail from ${escapeHtml(listName)}.</p>` +
      `<p><a href="${href}">Confirm my subscription</a></p>` +
      '<p>If you did not ask for this, ignore this message and you will not be subscribed.</p>' +
      '</body></html>'
    )
  }
  const replaced = confMessage.replace(CONFIRM_TAG, href)
  if (replaced !== confMessage) return replaced
  const paragraph = `<p><a href="${href}">${href}</a></p>`
  const bodyEnd = confMessage.search(/<\/body\s*>/i)
  return bodyEnd < 0
    ? `${confMessage}${paragraph}`
    : `${confMessage.slice(0, bodyEnd)}${paragraph}${confMessage.slice(bodyEnd)}`
}

/** `Name <a@b>` or a bare address, as MAIL_FROM may be written. */
function parseAddress(value: string): MailAddress {
  const m = /^(.*)<([^<>\s]+)>\s*$/.exec(value)
  if (!m) return { address: value.trim() }
  return { name: m[1]!.trim().replace(/^"(.*)"$/, '$1'), address: m[2]! }
}
