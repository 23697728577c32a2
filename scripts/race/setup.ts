import type pg from 'pg'
import { CAMPAIGN_HTML, campaignBody, person, pipelineBody } from './bodies.js'
import { call, obj } from './calls.js'
import { COUPON_CODES, EMAILS, pools } from './pools.js'
import { DOMAIN, FROM, PORT_ALL } from './settings.js'

// What a run creates before the traffic: domains, lists with members, templates, coupons, campaigns, pipelines.

/** A setup call that must succeed (on the process that runs everything). */
export async function must(
  kind: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const r = await call(kind, method, p, body, { port: PORT_ALL })
  if (r.status !== 200) throw new Error(`setup ${method} ${p}: ${r.status} ${r.text}`)
  return obj(r.body)
}

export async function setup(client: pg.Client, hookPort: number) {
  // Verified sending + transactional domain: created through the API (real DKIM key), then marked valid in SQL
  // as the test helper addDomain does (verification would need DNS).
  await must('setup', 'POST', '/domains', { name: DOMAIN, type: 'sending' })
  await must('setup', 'POST', '/domains', { name: DOMAIN, type: 'transactional' })
  await client.query('UPDATE domains SET valid = true WHERE name = $1', [DOMAIN])
  await must('setup', 'POST', '/account/settings/webhook', { url: `http://127.0.0.1:${hookPort}/hook` })
  for (let i = 0; i < 4; i++) {
    const l = await must('setup', 'POST', '/lists', {
      name: `List ${i}`,
      from_name: 'Race',
      from_email: FROM,
      reply_to: `help@${DOMAIN}`,
    })
    pools.lists.push(l.id as number)
    await must('setup', 'POST', `/lists/${l.id}/subscribe-bulk`, {
      subscriber_data: EMAILS.map(person),
      update_existing: true,
    })
  }
  // RACE_FILL: contacts in a list of their own that no call touches, so that plans are those of a real
  // account (index probes) rather than of a table of a few hundred rows (seq scans and hash joins).
  const fill = Number(process.env.RACE_FILL ?? 0)
  if (fill > 0) {
    const l = await must('setup', 'POST', '/lists', { name: 'Filler', from_name: 'Race', from_email: FROM })
    for (let at = 0; at < fill; at += 2500)
      await must('setup', 'POST', `/lists/${l.id}/subscribe-bulk`, {
        subscriber_data: Array.from({ length: Math.min(2500, fill - at) }, (_, i) => ({
          email: `filler${at + i}@fill.example`,
          name: 'F',
        })),
      })
    await client.query('ANALYZE')
  }
  for (let i = 0; i < 3; i++) {
    const t = await must('setup', 'POST', '/templates', {
      name: `T${i}`,
      html: CAMPAIGN_HTML(),
      subject: 'Tmpl',
    })
    pools.templates.push(t.id as number)
  }
  const f = await must('setup', 'POST', '/coupons/folders', { name: 'F0' })
  pools.folders.push(f.id as number)
  await must('setup', 'POST', '/coupons/import', { folderId: f.id, codes: COUPON_CODES })
  for (let i = 0; i < 3; i++) {
    const c = await must('setup', 'POST', '/campaigns', campaignBody())
    pools.campaigns.push(c.id as number)
  }
  for (let i = 0; i < 3; i++) {
    const p = await must('setup', 'POST', '/pipelines', pipelineBody(hookPort))
    pools.pipelines.push(p.id as number)
  }
}
