import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { composeConfirmationMail, confirmationHtml, type ConfirmationMailInput } from './confirmation.mail.js'
import { htmlToTextPart } from '../../core/mail/text-part.js'

const LINK = 'http://127.0.0.1:3000/confirm/abc.def'

function input(list: Partial<ConfirmationMailInput['list']> = {}): ConfirmationMailInput {
  return {
    list: {
      name: 'News',
      fromName: 'Shop',
      fromEmail: 'news@shop.cz',
      replyTo: '',
      confSubject: 'Confirm please',
      confMessage: '<p>Click <a href="*|CONFIRM|*">here</a></p>',
      ...list,
    },
    contact: { email: 'jan@example.cz', name: 'Jan', surname: 'Novák' },
    link: LINK,
    fallbackFrom: 'no-reply@tidings.test',
  }
}

describe('confirmation mail composition', () => {
  it('takes From, To, Subject and Reply-To from the list and the contact', () => {
    const mail = composeConfirmationMail(input({ replyTo: 'help@shop.cz' }))
    assert.deepEqual(mail.from, { name: 'Shop', address: 'news@shop.cz' })
    assert.deepEqual(mail.to, [{ name: 'Jan Novák', address: 'jan@example.cz' }])
    assert.equal(mail.subject, 'Confirm please')
    assert.equal(mail.replyTo, 'help@shop.cz')
    assert.equal(mail.html, `<p>Click <a href="${LINK}">here</a></p>`)
    assert.equal(mail.text, `Click here (${LINK})`)
  })

  it('falls back to MAIL_FROM, a default subject and no Reply-To', () => {
    const mail = composeConfirmationMail({
      ...input({ fromEmail: '', fromName: '', confSubject: ' ' }),
      fallbackFrom: '"Tidings" <bot@tidings.test>',
    })
    assert.deepEqual(mail.from, { name: 'Tidings', address: 'bot@tidings.test' })
    assert.equal(mail.subject, 'Please confirm your subscription to News')
    assert.equal('replyTo' in mail, false)
    const bare = composeConfirmationMail(input({ fromEmail: '', fromName: '' }))
    assert.deepEqual(bare.from, { name: 'News', address: 'no-reply@tidings.test' })
  })

  it('replaces the CONFIRM tag in any case, raw, percent-encoded in href, and everywhere it occurs', () => {
    const html = confirmationHtml(
      'News',
      '<a href="*%7Cconfirm%7C*">a</a> <a href=\'*|Confirm|*\'>b</a> {*|CONFIRM|*} *|confirm|*',
      LINK,
    )
    assert.equal(html, `<a href="${LINK}">a</a> <a href='${LINK}'>b</a> ${LINK} ${LINK}`)
  })

  it("takes *|SUBCONFIRM|*, the name in Ecomail's documentation, as the CONFIRM tag", () => {
    const html = confirmationHtml('News', '<a href="*|SUBCONFIRM|*">a</a> {*|subconfirm|*}', LINK)
    assert.equal(html, `<a href="${LINK}">a</a> ${LINK}`)
  })

  it('HTML-escapes the link', () => {
    const html = confirmationHtml('News', '<a href="*|CONFIRM|*">x</a>', 'http://h/confirm/a?b=1&c=2')
    assert.equal(html, '<a href="http://h/confirm/a?b=1&amp;c=2">x</a>')
    assert.match(htmlToTextPart(html), /http:\/\/h\/confirm\/a\?b=1&c=2/)
  })

  it('appends the link when the message has no CONFIRM tag, before </body> when there is one', () => {
    assert.equal(
      confirmationHtml('News', '<html><body><p>Hi</p></BODY></html>', LINK),
      `<html><body><p>Hi</p><p><a href="${LINK}">${LINK}</a></p></BODY></html>`,
    )
    assert.equal(confirmationHtml('News', 'Hi', LINK), `Hi<p><a href="${LINK}">${LINK}</a></p>`)
  })

  it('uses a default message with the escaped list name when conf_message is empty', () => {
    const html = confirmationHtml('A <b> & "c"', '  ', LINK)
    assert.match(html, /A &lt;b&gt; &amp; &quot;c&quot;/)
    assert.ok(html.includes(`<a href="${LINK}">`))
    const mail = composeConfirmationMail(input({ confMessage: '' }))
    assert.ok(mail.text?.includes(LINK))
    assert.match(mail.text ?? '', /Please confirm that you want to receive mail from News\./)
    assert.doesNotMatch(mail.text ?? '', /[<>]/)
  })

  it('keeps the link in the text part even when the markup hides it from the converter', () => {
    const mail = composeConfirmationMail(input({ confMessage: '<img alt="*|CONFIRM|*">Hello' }))
    assert.ok(mail.text?.endsWith(`\n\n${LINK}`))
  })

  it('leaves no CR/LF in Reply-To', () => {
    const mail = composeConfirmationMail(input({ replyTo: 'a@shop.cz\r\nBcc: x@evil.cz' }))
    assert.doesNotMatch(mail.replyTo ?? '', /[\r\n]/)
  })
})
