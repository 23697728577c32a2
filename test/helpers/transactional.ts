import assert from 'node:assert/strict'
import type { TestApp } from './app.js'

/**
 * POST /transactional/send-message of an order mail ("Your order", from orders@<domain>) to `to`, as the tests
 * of the sender and its outcomes queue it; asserts the 200 and returns the call's `results.id`.
 */
export async function sendOrderMail(
  t: TestApp,
  key: string,
  to: string[],
  body: { html?: string; text?: string; domain?: string } = {},
): Promise<number> {
  const res = await t.req('POST', '/transactional/send-message', {
    key,
    body: {
      message: {
        subject: 'Your order',
        from_name: 'Shop',
        from_email: `orders@${body.domain ?? 'shop.example'}`,
        ...(body.html === undefined ? { text: body.text ?? 'Thanks' } : { html: body.html }),
        to: to.map((email) => ({ email })),
      },
    },
  })
  assert.equal(res.status, 200, res.text)
  return res.body.results.id as number
}
