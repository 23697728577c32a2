import { bulkRows, person, transaction } from './bodies.js'
import { call } from './calls.js'
import { E, L, type Op, T, enc } from './operation.js'
import { CITIES, IDEMPOTENCY_KEYS, ORDERS, SHOPS, TAGS, pools } from './pools.js'
import { chance, pick, ri } from './random.js'
import { FROM } from './settings.js'

/** Calls about subscribers, their purchases and events, and transactional mail. */
export function peopleCalls(): Op[] {
  return [
    // Subscribers
    [
      'subscribe',
      10,
      () =>
        call(
          'subscribe',
          'POST',
          `/lists/${L()}/subscribe`,
          {
            subscriber_data: person(E()),
            update_existing: true,
            resubscribe: chance(0.7),
            trigger_autoresponders: chance(0.5),
            skip_confirmation: true,
          },
          chance(0.1) ? { headers: { 'Idempotency-Key': pick(IDEMPOTENCY_KEYS) } } : {},
        ),
    ],
    [
      'subscribe-bulk',
      5,
      () =>
        call('subscribe-bulk', 'POST', `/lists/${L()}/subscribe-bulk`, {
          subscriber_data: bulkRows(),
          update_existing: true,
          resubscribe: chance(0.3),
        }),
    ],
    [
      'update-subscriber',
      5,
      () =>
        call('update-subscriber', 'PUT', `/lists/${L()}/update-subscriber`, {
          email: E(),
          subscriber_data: { name: `U${ri(100)}`, city: pick(CITIES), tags: TAGS.filter(() => chance(0.3)) },
        }),
    ],
    [
      'update-subscribers-bulk',
      4,
      () =>
        call('update-subscribers-bulk', 'PUT', `/lists/${L()}/update-subscribers-bulk`, {
          subscriber_data: Array.from({ length: 5 + ri(30) }, () => ({
            email: E(),
            name: `B${ri(100)}`,
            status: pick([1, 1, 1, 2, 4]),
            tags: TAGS.filter(() => chance(0.3)),
          })),
          allow_resubscribe: chance(0.5),
        }),
    ],
    ['unsubscribe', 4, () => call('unsubscribe', 'DELETE', `/lists/${L()}/unsubscribe`, { email: E() })],
    ['delete-subscriber', 2, () => call('delete-subscriber', 'DELETE', `/subscribers/${enc(E())}/delete`)],
    [
      'get-list-subscriber',
      4,
      () => call('get-list-subscriber', 'GET', `/lists/${L()}/subscriber/${enc(E())}`),
    ],
    ['get-subscriber', 3, () => call('get-subscriber', 'GET', `/subscribers/${enc(E())}`)],
    [
      'list-subscribers',
      3,
      () =>
        call(
          'list-subscribers',
          'GET',
          `/lists/${L()}/subscribers?page=${1 + ri(2)}&per_page=${pick([20, 50])}${chance(0.3) ? '&status=unsubscribed' : ''}`,
        ),
    ],
    ['email-log', 1, () => call('email-log', 'GET', `/subscribers/${enc(E())}/email-log`)],
    ['automation-log', 1, () => call('automation-log', 'GET', `/subscribers/${enc(E())}/automation-log`)],
    ['search', 1, () => call('search', 'GET', `/search?query=u${ri(4)}`)],
    ['get-list', 1, () => call('get-list', 'GET', `/lists/${L()}`)],
    // Purchases and tracker events
    ['transaction', 4, () => call('transaction', 'POST', '/tracker/transaction', transaction(pick(ORDERS)))],
    [
      'transaction-bulk',
      2,
      () =>
        call('transaction-bulk', 'POST', '/tracker/transaction-bulk', {
          transaction_data: Array.from({ length: 5 + ri(40) }, () => transaction(pick(ORDERS))),
        }),
    ],
    [
      'transaction-update',
      2,
      () => {
        const o = pick(ORDERS)
        return call('transaction-update', 'PUT', `/tracker/transaction/${o}`, transaction(o))
      },
    ],
    [
      'transaction-delete',
      2,
      () =>
        call(
          'transaction-delete',
          'DELETE',
          `/tracker/transaction/${pick(ORDERS)}/delete`,
          chance(0.5) ? { transaction_data: { shop: pick(SHOPS) } } : undefined,
        ),
    ],
    [
      'transaction-delete-bulk',
      1,
      () =>
        call('transaction-delete-bulk', 'DELETE', '/tracker/transaction/delete-bulk', {
          transaction_data: Array.from({ length: 3 + ri(10) }, () => ({
            order_id: pick(ORDERS),
            shop: pick(SHOPS),
          })),
        }),
    ],
    ['transaction-list', 1, () => call('transaction-list', 'GET', `/tracker/transaction?email=${enc(E())}`)],
    [
      'subscriber-transactions',
      1,
      () => call('subscriber-transactions', 'GET', `/subscribers/${enc(E())}/transactions`),
    ],
    [
      'tracker-event',
      4,
      () =>
        call('tracker-event', 'POST', '/tracker/events', {
          event: {
            email: E(),
            category: 'shop',
            action: pick(['view', 'cart']),
            label: 'p1',
            value: { x: ri(10) },
          },
        }),
    ],
    // Transactional mail
    [
      'send-message',
      4,
      () =>
        call(
          'send-message',
          'POST',
          '/transactional/send-message',
          {
            message: {
              subject: 'Order *|order|*',
              from_name: 'Race',
              from_email: FROM,
              to: Array.from({ length: 1 + ri(3) }, () => ({ email: E(), name: 'X' })),
              html:
                '<p>Thanks *|order|*</p><p><a href="https://shop.example/o">Order</a></p>' +
                (chance(0.3) && pools.folders.length ? `<p>*|COUPON:${pick(pools.folders)}|*</p>` : ''),
              global_merge_vars: [{ name: 'order', content: `o${ri(30)}` }],
              options: { click_tracking: true, open_tracking: true },
            },
          },
          chance(0.15) ? { headers: { 'Idempotency-Key': pick(IDEMPOTENCY_KEYS) } } : {},
        ),
    ],
    [
      'send-template',
      3,
      () =>
        call('send-template', 'POST', '/transactional/send-template', {
          message: {
            template_id: T(),
            subject: 'Template mail',
            from_name: 'Race',
            from_email: FROM,
            to: [{ email: E(), name: 'Y' }],
          },
        }),
    ],
    ['transactional-stats', 1, () => call('transactional-stats', 'GET', '/transactional/stats')],
  ]
}
