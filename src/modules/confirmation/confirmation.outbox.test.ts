import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { simpleParser, type ParsedMail } from 'mailparser'
import { startTestApp } from '../../../test/helpers/app.js'
import { addMember, confirmPath, membershipOf } from './confirmation.test-helpers.js'

async function firstOutboxMail(dir: string, timeoutMs = 10_000): Promise<ParsedMail> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const files = (await fs.readdir(dir).catch(() => [])).filter((f) => f.endsWith('.eml'))
    if (files[0]) return simpleParser(await fs.readFile(path.join(dir, files[0])))
    if (Date.now() > deadline) throw new Error(`no .eml in ${dir}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('double opt-in confirmation without SMTP_URL', async () => {
  const t = await startTestApp()

  it('writes the confirmation mail to the outbox, and its link confirms', async () => {
    const list = await t.req('POST', '/lists', {
      body: {
        name: 'Outbox list',
        double_optin: true,
        from_email: 'news@shop.cz',
        from_name: 'Shop',
        // The person's fields are merge tags here as in any mail (contract §7); they rendered empty before.
        conf_subject: 'Potvrďte odběr, *|name|*',
        conf_message: '<p>Milá *|NAME|* {*|surname|*}, potvrďte: <a href="*|CONFIRM|*">ano</a></p>',
      },
    })
    const listId: number = list.body.id
    const { contactId } = await addMember(t, listId, 'eva@example.cz')
    const mail = await firstOutboxMail(path.join(t.dataDir, 'outbox'))
    assert.deepEqual(mail.from?.value, [{ name: 'Shop', address: 'news@shop.cz' }])
    assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : null, 'eva@example.cz')
    assert.equal(mail.subject, 'Potvrďte odběr, Jana')
    assert.match(String(mail.html), /Milá Jana Nováková, potvrďte/)
    const link = confirmPath(String(mail.html))
    assert.equal(confirmPath(mail.text ?? ''), link)
    const res = await t.req('GET', link, { key: null })
    assert.equal(res.status, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.text, /Your subscription is confirmed/)
    assert.equal((await membershipOf(t, listId, contactId))?.status, 1)
  })
})
