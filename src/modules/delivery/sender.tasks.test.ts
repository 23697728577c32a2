import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTestApp } from '../../../test/helpers/app.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { addDomain } from '../transactional/transactional.test-helpers.js'
import { createCampaign, listWith, sendingDomain } from '../campaigns/campaign-send.test-helpers.js'
import { signMessages, type SignTask } from './sign.worker.js'
import { trackableHtml } from './render.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'

const sink = await startSmtpSink()

describe('sender: what goes to the signing threads', async () => {
  const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const shop = await t.createAccount('paid')
  await addDomain(t, shop.id, 'shop.example')
  const tasks: SignTask[] = []
  /** What the sender asked of the signer, in order. */
  const calls: string[] = []
  const sender = startCampaignSender(t.ctx, {
    loop: false,
    signer: {
      sign: (task, options) => {
        tasks.push(task)
        calls.push(`sign ${task.kind}${options?.ahead ? ' ahead' : ''}`)
        return signMessages(task)
      },
      warm: async () => {
        calls.push('warm')
        return 0
      },
      links: async (content) => {
        calls.push('links')
        return trackableHtml(content).links
      },
      close: async () => undefined,
    },
  })
  t.ctx.onClose(() => sender.stop())

  const send = (to: string, html: string) => sendOrderMail(t, shop.key, [to], { html })

  it('sends calls of one template with one copy of their content', async () => {
    for (let i = 0; i < 3; i++) await send(`buyer${i}@example.cz`, '<p>Thanks for your order</p>')
    await send('other@example.cz', '<p>Another mail</p>')
    assert.equal(await sender.runOnce(), 4)
    assert.equal(sink.messages.length, 4)
    const slices = tasks.flatMap((task) => (task.kind === 'body' ? task.slices : []))
    assert.equal(slices.length, 4, 'one slice per body row')
    const byKey = new Map<string, unknown>()
    for (const s of slices) {
      if (!byKey.has(s.key)) byKey.set(s.key, s.content)
      assert.equal(s.content, byKey.get(s.key), 'slices of one content share one object')
    }
    assert.equal(byKey.size, 2)
    // Someone waits for this mail: it goes before campaign tasks waiting for a thread (sign-queue.ts).
    assert.ok(calls.length > 0 && calls.every((c) => c === 'sign body ahead'), calls.join(', '))
  })

  it("warms the signer when a campaign is prepared and has it find the links, before the campaign's first task", async () => {
    await sendingDomain(t, shop, 'letters.example')
    const list = await listWith(t, shop, [{ email: 'reader@example.cz', name: 'Reader' }])
    const id = await createCampaign(t, shop, [list], { from_email: 'news@letters.example' })
    assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: shop.key })).status, 200)
    calls.length = 0
    assert.equal(await sender.runOnce(), 1)
    assert.deepEqual(calls, ['warm', 'links', 'sign campaign'])
    // Its link, found by the signer, is tracked in the mail sent.
    assert.match(String(sink.messages.at(-1)!.parsed.html), /href="[^"]+\/t\/c\/[^"]+\.0"/)
    // Nothing left to prepare: the next round does not warm it again.
    calls.length = 0
    await sender.runOnce()
    assert.deepEqual(calls, [])
  })
})
