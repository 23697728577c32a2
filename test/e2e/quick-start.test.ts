/**
 * Issue 10 item 1, contract §2 "Trying it locally": the README's quick start as a new user runs it. The server is
 * what `npm start` runs, on a fresh installation without SMTP_URL and without any domain; the requests are the
 * README's curl commands (same paths and bodies), and the test ends at the .eml file in DATA_DIR/outbox.
 */
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { outboxMails, toAddresses } from '../helpers/outbox.js'
import { freePort, freshInstallation, keyedApi, startServerProcess, waitFor } from '../helpers/processes.js'

const BANNER = /Its API key \(shown only now\):\n\n {2}(\S+)\n/

/** The README's campaign body. */
const CAMPAIGN = {
  title: 'Hello',
  subject: 'Hello *|name|*',
  from_name: '',
  from_email: '',
  reply_to: '',
  html_text: '<p>Hello *|name|*, see <a href="https://example.com/sale">our sale</a>.</p>',
  recepient_lists: [1],
}

describe('quick start: a first campaign on a fresh machine, to the outbox', async () => {
  const { env, dataDir } = await freshInstallation()
  // A real port, so the links in mail (PUBLIC_URL defaults to http://localhost:PORT) point at this server.
  const port = await freePort()
  const server = await startServerProcess({ ...env, SMTP_URL: '', PORT: String(port) })
  after(() => server.stop())
  const key = BANNER.exec(server.stdout())?.[1]
  const api = keyedApi(server.url!, key ?? '')
  /** Polls (bounded) until the campaign has left preparing and sending. */
  const settled = async (id: number) => {
    const deadline = Date.now() + 30_000
    for (;;) {
      const res = await api('GET', `/campaigns/${id}`)
      if (![1, 2].includes(res.body.status as number)) return res.body
      if (Date.now() > deadline) throw new Error(`campaign ${id}: ${JSON.stringify(res.body)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const unsignedLines = () =>
    server
      .stdout()
      .split('\n')
      .filter((l) => l.includes('goes out unsigned'))

  it('list → subscriber → campaign → send ends with the message as an unsigned .eml in DATA_DIR/outbox', async () => {
    assert.ok(key, server.stdout())
    const list = await api('POST', '/lists', {
      name: 'Newsletter',
      from_name: 'Example Shop',
      from_email: 'news@example.com',
    })
    assert.equal(list.status, 200)
    assert.equal(list.body.id, 1)
    const subscriber = await api('POST', '/lists/1/subscribe', {
      subscriber_data: { email: 'jana@example.org', name: 'Jana' },
    })
    assert.equal(subscriber.status, 200)
    assert.equal(subscriber.body.status, 1)
    const campaign = await api('POST', '/campaigns', CAMPAIGN)
    assert.equal(campaign.status, 200)
    assert.equal(campaign.body.id, 1)
    assert.deepEqual(await api('POST', '/campaigns/1/send'), { status: 200, body: { id: 1, status: 1 } })

    const sent = await settled(1)
    assert.equal(sent.status, 3, JSON.stringify(sent))
    assert.equal(sent.error, null)
    assert.equal(sent.recipients, 1)
    assert.equal(sent.from_email, 'news@example.com')

    const mails = await outboxMails(path.join(dataDir, 'outbox'))
    assert.equal(mails.length, 1)
    const { raw, parsed } = mails[0]!
    assert.deepEqual(parsed.from?.value, [{ name: 'Example Shop', address: 'news@example.com' }])
    assert.deepEqual(toAddresses(parsed.to), ['jana@example.org'])
    assert.equal(parsed.subject, 'Hello Jana')
    const html = String(parsed.html)
    assert.match(html, /<p>Hello Jana, see <a href="[^"]+">our sale<\/a>\.<\/p>/)
    assert.match(parsed.text ?? '', /^Hello Jana, see our sale \(/)
    // The link is tracked through the service and leads to the original address.
    const tracked = /<a href="([^"]+)">our sale/.exec(html)?.[1] ?? ''
    assert.ok(tracked.startsWith(`http://localhost:${port}/t/c/`), tracked)
    assert.ok((parsed.text ?? '').includes(tracked))
    const click = await fetch(`${server.url}${new URL(tracked).pathname}`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    })
    assert.equal(click.headers.get('location'), 'https://example.com/sale')
    assert.match(raw, new RegExp(`^List-Unsubscribe: <http://localhost:${port}/u/`, 'm'))
    // Unsigned: the domain was never verified, and nothing leaves the machine.
    assert.doesNotMatch(raw.split('\r\n\r\n')[0]!, /^DKIM-Signature:/im)
    // The child's output reaches this process through a pipe, so the line may trail the mail a little.
    await waitFor(() => unsignedLines().length > 0, 10_000, 'the unsigned-mail log line')
    assert.equal(unsignedLines().length, 1)
    assert.match(unsignedLines()[0]!, /mail from example\.com goes out unsigned/)
  })

  it('says so in the log once per domain, however many campaigns go out from it', async () => {
    const second = await api('POST', '/campaigns', { ...CAMPAIGN, title: 'Again' })
    assert.equal(second.status, 200)
    const id = second.body.id as number
    assert.equal((await api('POST', `/campaigns/${id}/send`)).status, 200)
    assert.equal((await settled(id)).status, 3)
    assert.equal((await outboxMails(path.join(dataDir, 'outbox'))).length, 2)
    assert.equal(unsignedLines().length, 1)
  })
})
