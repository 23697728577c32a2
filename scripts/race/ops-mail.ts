import { addCapped, campaignBody, pipelineBody, replaceIn, utc } from './bodies.js'
import { call, obj } from './calls.js'
import { C, E, L, type Op, P } from './operation.js'
import { CITIES, POOL_MAX, TAGS, pools } from './pools.js'
import { chance, pick, ri } from './random.js'

/** Calls about campaigns, segments and pipelines. */
export function mailCalls(hookPort: number): Op[] {
  return [
    // Campaigns
    [
      'campaign-create',
      3,
      async () => {
        const r = await call('campaign-create', 'POST', '/campaigns', campaignBody())
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.campaigns, id, POOL_MAX.campaigns)
      },
    ],
    ['campaign-update', 1, () => call('campaign-update', 'PUT', `/campaigns/${C()}`, campaignBody())],
    ['campaign-send', 3, () => call('campaign-send', 'POST', `/campaigns/${C()}/send`)],
    ['campaign-pause', 2, () => call('campaign-pause', 'POST', `/campaigns/${C()}/pause`)],
    ['campaign-resume', 2, () => call('campaign-resume', 'POST', `/campaigns/${C()}/resume`)],
    ['campaign-cancel', 1, () => call('campaign-cancel', 'POST', `/campaigns/${C()}/cancel`)],
    [
      'campaign-schedule',
      2,
      () =>
        call('campaign-schedule', 'POST', `/campaigns/${C()}/schedule`, {
          scheduled_at: utc(Date.now() + (3 + ri(20)) * 1000),
        }),
    ],
    ['campaign-unschedule', 1, () => call('campaign-unschedule', 'DELETE', `/campaigns/${C()}/schedule`)],
    [
      'campaign-delete',
      1,
      async () => {
        const id = C()
        const r = await call('campaign-delete', 'DELETE', `/campaigns/${id}`)
        if (r.status === 200 || r.status === 404) replaceIn(pools.campaigns, id, undefined)
      },
    ],
    ['campaign-test', 1, () => call('campaign-test', 'POST', `/campaigns/${C()}/test`, { emails: [E()] })],
    ['campaign-get', 1, () => call('campaign-get', 'GET', `/campaigns/${C()}`)],
    ['campaign-stats', 1, () => call('campaign-stats', 'GET', `/campaigns/${C()}/stats`)],
    [
      'campaign-stats-detail',
      1,
      () => call('campaign-stats-detail', 'GET', `/campaigns/${C()}/stats-detail`),
    ],
    ['campaign-log', 1, () => call('campaign-log', 'GET', `/campaigns/${C()}/log`)],
    ['campaigns-list', 1, () => call('campaigns-list', 'GET', '/campaigns?per_page=50')],
    // Segments
    [
      'segment-create',
      1,
      async () => {
        const list = L()
        const filter = pick<unknown>([
          { tag: pick(TAGS) },
          { field: 'city', op: 'eq', value: pick(CITIES) },
          { any: [{ tag: 'vip' }, { event: { category: 'shop', action: 'view' } }] },
          { purchased: { days: 30 } },
        ])
        const r = await call('segment-create', 'POST', `/lists/${list}/segments`, {
          name: `S${ri(1000)}`,
          filter,
        })
        const id = obj(r.body).id
        if (r.status === 200 && id !== undefined)
          addCapped(pools.segments, { id: String(id), list }, POOL_MAX.segments)
      },
    ],
    ['segment-list', 1, () => call('segment-list', 'GET', `/lists/${L()}/segments`)],
    // Pipelines
    [
      'pipeline-create',
      2,
      async () => {
        const r = await call('pipeline-create', 'POST', '/pipelines', pipelineBody(hookPort))
        const id = obj(r.body).id
        if (r.status === 200 && typeof id === 'number') addCapped(pools.pipelines, id, POOL_MAX.pipelines)
      },
    ],
    [
      'pipeline-update',
      1,
      () =>
        call(
          'pipeline-update',
          'PUT',
          `/pipelines/${P()}`,
          chance(0.5) ? { status: pick(['active', 'paused']) } : pipelineBody(hookPort),
        ),
    ],
    [
      'pipeline-trigger',
      4,
      () => call('pipeline-trigger', 'POST', `/pipelines/${P()}/trigger`, { email: E() }),
    ],
    [
      'pipeline-delete',
      1,
      async () => {
        const id = P()
        const r = await call('pipeline-delete', 'DELETE', `/pipelines/${id}`)
        if (r.status === 200 || r.status === 404) replaceIn(pools.pipelines, id, undefined)
      },
    ],
    ['pipeline-stats', 1, () => call('pipeline-stats', 'GET', `/pipelines/${P()}/stats`)],
    ['pipelines-list', 1, () => call('pipelines-list', 'GET', '/pipelines')],
  ]
}
