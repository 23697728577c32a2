import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { startWebhookReceiver } from '../webhooks/webhook-receiver.test-helpers.js'
import {
  createList,
  createPipeline,
  logOf,
  node,
  settle,
  subscribe,
  startAutomationApp,
} from './automations.test-helpers.js'

const sink = await startSmtpSink()
const receiver = await startWebhookReceiver()

/**
 * SMS_GATEWAY_URL is the operator's setting: a gateway inside their network (here on 127.0.0.1) is reached
 * without ALLOW_PRIVATE_NETWORK, which is about customers' URLs (webhook nodes) and stays off.
 */
describe('sms nodes and a gateway on a private address', async () => {
  const { t } = await startAutomationApp(sink, { smsGatewayUrl: receiver.url('/gateway') })

  it('posts to the gateway', async () => {
    const listId = await createList(t)
    const p = await createPipeline(t, listId, [node('s', 'sms', { text: 'Hello' }, ['e']), node('e', 'end')])
    await subscribe(t, listId, 'gw@example.cz', { phone: '+420777000111' })
    await settle(t)
    const calls = receiver.received.filter((r) => r.path === '/gateway')
    assert.deepEqual(
      calls.map((c) => (JSON.parse(c.body) as { to: string }).to),
      ['+420777000111'],
    )
    assert.equal((await logOf(t, p))[0]!.props.sent, true)
  })
})
