import { CAMPAIGN_HTML, addCapped, person, replaceIn } from './bodies.js'
import { call, obj } from './calls.js'
import { L, type Op, T } from './operation.js'
import { trackingUrls } from './peers.js'
import { COUPON_CODES, EMAILS, POOL_MAX, THROWAWAY_DOMAINS, pools } from './pools.js'
import { chance, pick, ri } from './random.js'
import { API_PORTS, DOMAIN, FROM } from './settings.js'

/** Calls about lists, templates, coupons, domains, the webhook and the tracking pages. */
export function accountCalls(hookPort: number): Op[] {
  return [
    // Lists and templates deleted and recreated
    [
      'list-recreate',
      1,
      async () => {
        if (pools.lists.length < 2) return
        const id = L()
        const del = await call('list-delete', 'DELETE', `/lists/${id}`)
        if (del.status !== 200 && del.status !== 404) return
        const r = await call('list-create', 'POST', '/lists', {
          name: `List ${ri(1000)}`,
          from_name: 'Race',
          from_email: FROM,
          reply_to: `help@${DOMAIN}`,
        })
        const nid = obj(r.body).id
        replaceIn(pools.lists, id, r.status === 200 && typeof nid === 'number' ? nid : undefined)
        if (typeof nid === 'number')
          await call('subscribe-bulk', 'POST', `/lists/${nid}/subscribe-bulk`, {
            subscriber_data: EMAILS.map(person),
            update_existing: true,
          })
      },
    ],
    [
      'template-recreate',
      1,
      async () => {
        if (pools.templates.length < 2) return
        const id = T()
        const del = await call('template-delete', 'DELETE', `/templates/${id}`)
        if (del.status !== 200 && del.status !== 404) return
        const r = await call('template-create', 'POST', '/templates', {
          name: `T${ri(1000)}`,
          html: CAMPAIGN_HTML(),
          subject: 'Tmpl *|name|*',
        })
        const nid = obj(r.body).id
        replaceIn(pools.templates, id, r.status === 200 && typeof nid === 'number' ? nid : undefined)
      },
    ],
    [
      'template-update',
      1,
      () =>
        call('template-update', 'PUT', `/templates/${T()}`, { name: `T${ri(1000)}`, html: CAMPAIGN_HTML() }),
    ],
    // Coupons
    [
      'coupon-folder',
      1,
      async () => {
        const r = await call('coupon-folder', 'POST', '/coupons/folders', { name: `F${ri(5)}` })
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.folders, id, POOL_MAX.folders)
      },
    ],
    [
      'coupon-import',
      2,
      () =>
        call('coupon-import', 'POST', '/coupons/import', {
          ...(pools.folders.length && chance(0.8) ? { folderId: pick(pools.folders) } : {}),
          codes: Array.from({ length: 5 + ri(20) }, () => pick(COUPON_CODES)),
          valid_until: chance(0.5) ? '2099-01-01' : undefined,
          update_existing: chance(0.5),
        }),
    ],
    [
      'coupon-delete',
      1,
      () =>
        call('coupon-delete', 'DELETE', '/coupons/delete', {
          ...(pools.folders.length ? { folderId: pick(pools.folders) } : {}),
          codes: Array.from({ length: 3 + ri(5) }, () => pick(COUPON_CODES)),
        }),
    ],
    ['coupon-folders', 1, () => call('coupon-folders', 'GET', '/coupons/folders')],
    // Domains
    [
      'domain-add',
      1,
      () =>
        call('domain-add', 'POST', '/domains', {
          name: pick(THROWAWAY_DOMAINS),
          type: pick(['sending', 'transactional']),
        }),
    ],
    [
      'domain-remove',
      1,
      () =>
        call(
          'domain-remove',
          'DELETE',
          `/domains/${pick(THROWAWAY_DOMAINS)}${chance(0.7) ? `?type=${pick(['sending', 'transactional'])}` : ''}`,
        ),
    ],
    ['domains-list', 1, () => call('domains-list', 'GET', '/domains')],
    // Webhook
    [
      'webhook-reset',
      1,
      async () => {
        await call('webhook-remove', 'DELETE', '/account/settings/webhook')
        await call('webhook-set', 'POST', '/account/settings/webhook', {
          url: `http://127.0.0.1:${hookPort}/hook`,
        })
      },
    ],
    // Tracking pages from received mail
    [
      'tracking',
      5,
      async () => {
        if (!trackingUrls.length) return
        const u = new URL(pick(trackingUrls))
        const port = pick(API_PORTS)
        const p = u.pathname
        if (p.startsWith('/t/o/')) return call('track-open', 'GET', p, undefined, { key: null, port })
        if (p.startsWith('/t/c/')) return call('track-click', 'GET', p, undefined, { key: null, port })
        if (p.startsWith('/w/')) return call('track-web', 'GET', p, undefined, { key: null, port })
        if (chance(0.3)) return call('track-unsub-page', 'GET', p, undefined, { key: null, port })
        return call('track-unsub-post', 'POST', p, undefined, {
          key: null,
          port,
          raw: 'List-Unsubscribe=One-Click',
        })
      },
    ],
  ]
}
