import { BULK_EXTRA, CITIES, EMAILS, SHOPS, TAGS, pools } from './pools.js'
import { chance, pick, ri } from './random.js'
import { DOMAIN, FROM } from './settings.js'

// Request bodies for the calls, random within the shared pools.

export const CAMPAIGN_HTML = (folder?: number) =>
  '<html><body><p>Hello *|name|*!</p>' +
  '<p><a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> <a href="https://shop.example/other">Other</a></p>' +
  (folder ? `<p>Coupon: *|COUPON:${folder}|*</p>` : '') +
  '<p><a href="*|UNSUB|*">Unsubscribe</a> <a href="*|WEBVERSION|*">Web</a></p></body></html>'

export function person(email: string) {
  const p: Record<string, unknown> = { email, name: `N${ri(100)}`, city: pick(CITIES) }
  if (chance(0.7)) p.tags = TAGS.filter(() => chance(0.3))
  if (chance(0.3)) p.custom_fields = { score: ri(100), plan: pick(['a', 'b']) }
  return p
}

export function bulkRows(): Record<string, unknown>[] {
  const n = 50 + ri(151)
  const rows: Record<string, unknown>[] = []
  for (let i = 0; i < n; i++) rows.push(person(chance(0.45) ? pick(EMAILS) : pick(BULK_EXTRA)))
  return rows
}

export function transaction(order: string, email = pick(EMAILS)) {
  return {
    transaction: {
      order_id: order,
      email,
      shop: pick(SHOPS),
      amount: 10 + ri(500),
      tax: 5,
      shipping: 2,
      city: pick(CITIES),
      country: 'CZ',
      timestamp: Math.floor(Date.now() / 1000) - ri(86400),
    },
    transaction_items: [
      {
        code: `p${ri(10)}`,
        title: 'Thing',
        category: 'cat',
        price: 10,
        amount: 1 + ri(3),
        categories: ['a', 'b'],
      },
      { code: `p${ri(10)}`, title: 'Other', category: 'cat2', price: 20, amount: 1 },
    ],
  }
}

export function utc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

export function campaignBody() {
  const lists = pools.lists.filter(() => chance(0.5))
  if (lists.length === 0 && pools.lists.length) lists.push(pick(pools.lists))
  const targets = chance(0.2) && pools.segments.length ? { lists, segments: [pick(pools.segments)] } : lists
  return {
    title: `Campaign ${ri(1000)}`,
    from_name: 'Race',
    from_email: FROM,
    reply_to: `help@${DOMAIN}`,
    subject: 'Hi *|name|*',
    html_text: CAMPAIGN_HTML(chance(0.4) && pools.folders.length ? pick(pools.folders) : undefined),
    recepient_lists: targets,
  }
}

export function pipelineBody(hookPort: number) {
  const trigger = pick([
    { type: 'api' },
    { type: 'api' },
    { type: 'subscribe' },
    { type: 'tag', tag: pick(TAGS) },
    { type: 'event', category: 'shop', action: 'view' },
    { type: 'purchase' },
  ])
  const template = pools.templates.length ? pick(pools.templates) : 0
  const hook = chance(0.5)
  const actions: Record<string, unknown>[] = [
    { id: 't1', type: 'tag', properties: { name: 'Tag', tag: pick(TAGS) }, next: ['w1'] },
    { id: 'w1', type: 'wait', properties: { name: 'Wait', value: 1 + ri(3), unit: 'seconds' }, next: ['m1'] },
    {
      id: 'm1',
      type: 'mail',
      properties: { name: 'Mail', template, subject: 'Auto *|name|*', from_email: FROM, from_name: 'Race' },
      next: { default: [hook ? 'h1' : 'e1'], quarantine_skip: ['e1'] },
    },
    { id: 'e1', type: 'end', properties: { name: 'End' }, next: null },
  ]
  if (hook)
    actions.push({
      id: 'h1',
      type: 'webhook',
      properties: { name: 'Hook', url: `http://127.0.0.1:${hookPort}/pipehook`, method: 'POST' },
      next: ['e1'],
    })
  return {
    name: `Flow ${ri(1000)}`,
    list_id: pick(pools.lists),
    status: 'active',
    trigger,
    reentry: pick(['once', 'repeat']),
    start: 't1',
    actions,
  }
}

export function replaceIn<T>(arr: T[], oldV: T, newV: T | undefined) {
  const i = arr.indexOf(oldV)
  if (i >= 0) {
    if (newV === undefined) arr.splice(i, 1)
    else arr[i] = newV
  } else if (newV !== undefined) arr.push(newV)
}

export function addCapped<T>(arr: T[], v: T, max: number) {
  if (arr.length >= max) arr[ri(arr.length)] = v
  else arr.push(v)
}
