/**
 * What `npm start` runs in production: src/ compiled into dist/ (scripts/build.ts) and started as
 * `node dist/main.js`, with no TypeScript loader. Every other test runs the sources through tsx, so this one
 * proves the compiled tree works: paths computed from import.meta (the migrations folder) still resolve, and a
 * signing thread loads the compiled worker (a missing worker file would end the process, not just a test).
 */
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { buildDist, DIST_DIR } from '../../scripts/build.js'
import { outboxMails, toAddresses } from '../helpers/outbox.js'
import { freshInstallation, keyedApi, startServerProcess } from '../helpers/processes.js'

const BANNER = /Its API key \(shown only now\):\n\n {2}(\S+)\n/

describe('the compiled server (npm start)', async () => {
  await buildDist()
  const { env, dataDir } = await freshInstallation()
  // One signing thread: campaign mail is composed and signed there, from dist/modules/delivery/sign.worker.js.
  const server = await startServerProcess({ ...env, SMTP_URL: '', SEND_THREADS: '1' }, 90_000, [
    path.join(DIST_DIR, 'main.js'),
  ])
  after(() => server.stop())
  const key = BANNER.exec(server.stdout())?.[1]
  const api = keyedApi(server.url!, key ?? '')

  it('migrates a fresh database and sends a campaign through a signing thread to the outbox', async () => {
    assert.ok(key, server.stdout())
    const list = await api('POST', '/lists', {
      name: 'Newsletter',
      from_name: 'Example Shop',
      from_email: 'news@example.com',
    })
    assert.equal(list.status, 200)
    const listId = list.body.id as number
    const subscribed = await api('POST', `/lists/${listId}/subscribe`, {
      subscriber_data: { email: 'jana@example.org', name: 'Jana' },
    })
    assert.equal(subscribed.status, 200)
    const campaign = await api('POST', '/campaigns', {
      title: 'Hello',
      subject: 'Hello *|name|*',
      from_name: '',
      from_email: '',
      reply_to: '',
      html_text: '<p>Hello *|name|*</p>',
      recepient_lists: [listId],
    })
    assert.equal(campaign.status, 200)
    const id = campaign.body.id as number
    assert.equal((await api('POST', `/campaigns/${id}/send`)).status, 200)

    const deadline = Date.now() + 30_000
    let status: unknown
    while (Date.now() < deadline) {
      status = (await api('GET', `/campaigns/${id}`)).body.status
      if (status !== 1 && status !== 2) break
      await new Promise((r) => setTimeout(r, 50))
    }
    assert.equal(status, 3, server.stderr())
    const mails = await outboxMails(path.join(dataDir, 'outbox'))
    assert.equal(mails.length, 1)
    assert.deepEqual(toAddresses(mails[0]!.parsed.to), ['jana@example.org'])
    assert.equal(mails[0]!.parsed.subject, 'Hello Jana')
  })
})
