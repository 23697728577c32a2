import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { checkPipelineShape, validatePipeline, type RefLookup } from './pipeline-validate.js'

interface NodeBody {
  id: string
  type: string
  properties?: unknown
  next?: unknown
}
interface Body {
  name?: unknown
  list_id?: unknown
  actions: NodeBody[]
  [key: string]: unknown
}

const node = (id: string, type: string, properties: Record<string, unknown> = {}, next: unknown = []) => ({
  id,
  type,
  properties: { name: id, ...properties },
  next,
})

/** A sound graph of every kind of node: mail → wait → check → (split → tag | untag) | sms → … → end. */
function base(): Body {
  return {
    name: 'Flow',
    list_id: 1,
    actions: [
      node('m1', 'mail', { template: 5 }, ['w1']),
      node('w1', 'wait', { value: 2, unit: 'days' }, ['c1']),
      node('c1', 'check', { condition: { opened: 'm1' } }, { yes: ['s1'], no: ['x1'] }),
      node('s1', 'split', { variants: { a: 1, b: 3 } }, { a: ['t1'], b: ['u1'] }),
      node('t1', 'tag', { tag: 'vip' }, ['sub']),
      node('u1', 'untag', { tag: 'cold' }, ['sub']),
      node('sub', 'subscribe', { list_id: 2 }, ['uns']),
      node('uns', 'unsubscribe', { list_id: 3 }, ['ed']),
      node('ed', 'edit', { fields: { city: 'Brno' } }, ['wh']),
      node('wh', 'webhook', { url: 'https://hooks.example.com/x', method: 'post' }, ['tr']),
      node('tr', 'trigger', { pipeline_id: 9 }, ['nt']),
      node('nt', 'note', {}, ['end']),
      node('x1', 'sms', { text: 'Hi' }, ['end']),
      node('g1', 'goal', { condition: { purchased: { days: 30 } } }, ['end']),
      node('end', 'end', {}, null),
    ],
  }
}

function errorsOf(body: unknown): Record<string, string[]> {
  const r = checkPipelineShape(body)
  assert.equal(r.ok, false, 'expected the body to be refused')
  return r.ok ? {} : r.errors
}

/** Spoils a copy of the base graph and expects an error at `path` (and the message to match, if given). */
function refuses(spoil: (b: Body) => void, path: string, message?: RegExp): void {
  const b = base()
  spoil(b)
  const errors = errorsOf(b)
  assert.ok(errors[path], `expected an error at ${path}, got ${JSON.stringify(errors)}`)
  if (message)
    assert.ok(
      errors[path]!.some((m) => message.test(m)),
      JSON.stringify(errors[path]),
    )
}

const at = (b: Body, id: string): NodeBody => b.actions.find((n) => n.id === id)!
const props = (b: Body, id: string) => at(b, id).properties as Record<string, unknown>

describe('checkPipelineShape', () => {
  it('accepts a graph of every node type and fills the defaults', () => {
    const r = checkPipelineShape(base())
    assert.ok(r.ok, JSON.stringify(r.ok ? null : r.errors))
    const p = r.pipeline
    assert.equal(p.status, 'active')
    assert.equal(p.reentry, 'once')
    assert.deepEqual(p.trigger, { type: 'subscribe' })
    assert.equal(p.start, 'm1')
    assert.equal(p.actions.length, 15)
    assert.equal(p.actions.find((n) => n.id === 'wh')!.properties.method, 'POST')
    assert.equal(p.actions.find((n) => n.id === 'end')!.next, null)
    assert.deepEqual(
      r.refs.lists.map((u) => [u.id, u.path]),
      [
        [1, 'list_id'],
        [2, 'actions.6.properties.list_id'],
        [3, 'actions.7.properties.list_id'],
      ],
    )
    assert.deepEqual(r.refs.templates, [{ id: 5, path: 'actions.0.properties.template' }])
    assert.deepEqual(r.refs.pipelines, [{ id: 9, path: 'actions.10.properties.pipeline_id' }])
  })

  it('names an unnamed node by its type and takes [] as empty properties', () => {
    const b = base()
    at(b, 'nt').properties = []
    at(b, 'end').properties = undefined
    props(b, 't1').name = '  '
    const r = checkPipelineShape(b)
    assert.ok(r.ok, 'expected: r.ok')
    assert.equal(r.pipeline.actions.find((n) => n.id === 'nt')!.properties.name, 'note')
    assert.equal(r.pipeline.actions.find((n) => n.id === 'end')!.properties.name, 'end')
    assert.equal(r.pipeline.actions.find((n) => n.id === 't1')!.properties.name, 'tag')
  })

  describe('top-level fields', () => {
    it('needs a JSON object', () => assert.ok(errorsOf([]).body, 'expected: errorsOf([]).body'))
    it('needs a name', () => refuses((b) => (b.name = ' '), 'name'))
    it('needs an integer list_id', () => refuses((b) => (b.list_id = 'x'), 'list_id'))
    it('knows the statuses', () => refuses((b) => (b.status = 'running'), 'status'))
    it('knows the re-entry modes', () => refuses((b) => (b.reentry = 'twice'), 'reentry'))
    it('needs actions', () => refuses((b) => delete (b as Partial<Body>).actions, 'actions'))
    it('needs actions to be an array', () =>
      refuses((b) => ((b as Record<string, unknown>).actions = {}), 'actions'))
    it('needs at least one node', () => refuses((b) => (b.actions = []), 'actions'))
    it('takes at most 500 nodes', () =>
      refuses((b) => {
        b.actions = Array.from({ length: 501 }, (_, i) =>
          node(`n${i}`, 'note', {}, i < 500 ? [`n${i + 1}`] : []),
        )
      }, 'actions'))
    it('takes 500 nodes', () => {
      const b = base()
      b.actions = Array.from({ length: 500 }, (_, i) =>
        node(`n${i}`, 'note', {}, i < 499 ? [`n${i + 1}`] : []),
      )
      assert.ok(checkPipelineShape(b).ok, 'expected: checkPipelineShape(b).ok')
    })
  })

  describe('trigger', () => {
    const withTrigger = (trigger: unknown) => checkPipelineShape({ ...base(), trigger })
    it('must be an object', () => refuses((b) => (b.trigger = 'subscribe'), 'trigger'))
    it('knows the types', () => refuses((b) => (b.trigger = { type: 'cron' }), 'trigger.type'))
    it('event needs a category or an action', () =>
      refuses((b) => (b.trigger = { type: 'event' }), 'trigger.category', /required/))
    it('event takes either alone, and drops keys of other types', () => {
      const r = withTrigger({ type: 'event', action: 'view', tag: 'x' })
      assert.ok(r.ok, 'expected: r.ok')
      assert.deepEqual(r.pipeline.trigger, { type: 'event', action: 'view' })
    })
    it('tag needs a tag', () => refuses((b) => (b.trigger = { type: 'tag', tag: '' }), 'trigger.tag'))
    it('date needs a field', () => refuses((b) => (b.trigger = { type: 'date' }), 'trigger.field'))
    it('date refuses a contact field that holds no date', () =>
      refuses((b) => (b.trigger = { type: 'date', field: 'city' }), 'trigger.field'))
    it('date takes birthday, nameday or a custom field', () => {
      for (const field of ['birthday', 'NameDay', 'anniversary'])
        assert.ok(
          withTrigger({ type: 'date', field }).ok,
          'expected: withTrigger({ type: "date", field }).ok',
        )
      const r = withTrigger({ type: 'date', field: 'NameDay' })
      assert.ok(
        r.ok && r.pipeline.trigger.field === 'nameday',
        'expected: r.ok && r.pipeline.trigger.field === "nameday"',
      )
    })
    it('api, subscribe and purchase (with an optional shop) need nothing more', () => {
      for (const t of [
        { type: 'api' },
        { type: 'subscribe' },
        { type: 'purchase' },
        { type: 'purchase', shop: 'eu' },
      ])
        assert.ok(withTrigger(t).ok, JSON.stringify(t))
      refuses((b) => (b.trigger = { type: 'purchase', shop: 5 }), 'trigger.shop')
    })
  })

  describe('nodes', () => {
    it('must be objects', () => refuses((b) => ((b.actions as unknown[])[14] = 'end'), 'actions.14'))
    it('know their types', () => refuses((b) => (at(b, 'nt').type = 'fly'), 'actions.11.type', /invalid/))
    it('need an id', () => refuses((b) => (at(b, 'nt').id = ''), 'actions.11.id'))
    it('bound the id', () => refuses((b) => (at(b, 'end').id = 'x'.repeat(101)), 'actions.14.id'))
    it('have unique ids', () => refuses((b) => (at(b, 'nt').id = 'm1'), 'actions.11.id', /another node/))
    it('have object properties', () =>
      refuses((b) => (at(b, 'nt').properties = 'x'), 'actions.11.properties'))
    it('bound the size of properties', () =>
      refuses((b) => (props(b, 'nt').text = 'x'.repeat(100_001)), 'actions.11.properties', /larger/))
    it('have a text name', () => refuses((b) => (props(b, 'nt').name = 7), 'actions.11.properties.name'))
  })

  describe('properties per type', () => {
    const cases: [string, (b: Body) => void, string][] = [
      ['mail without template', (b) => delete props(b, 'm1').template, 'actions.0.properties.template'],
      [
        'mail with a template that is no id',
        (b) => (props(b, 'm1').template = 'abc'),
        'actions.0.properties.template',
      ],
      [
        'mail with a bad from_email',
        (b) => (props(b, 'm1').from_email = 'nope'),
        'actions.0.properties.from_email',
      ],
      [
        'mail with a subject that is no text',
        (b) => (props(b, 'm1').subject = 5),
        'actions.0.properties.subject',
      ],
      ['wait of 0', (b) => (props(b, 'w1').value = 0), 'actions.1.properties.value'],
      ['wait without value', (b) => delete props(b, 'w1').value, 'actions.1.properties.value'],
      ['wait of an unknown unit', (b) => (props(b, 'w1').unit = 'weeks'), 'actions.1.properties.unit'],
      ['wait over ten years', (b) => (props(b, 'w1').value = 3651), 'actions.1.properties.value'],
      [
        'wait under a second (due at once, it would let a cycle spin)',
        (b) => Object.assign(props(b, 'w1'), { value: 0.0001, unit: 'seconds' }),
        'actions.1.properties.value',
      ],
      [
        'goal timeout under a second',
        (b) => (props(b, 'g1').timeout = { value: 0.5, unit: 'seconds' }),
        'actions.13.properties.timeout.value',
      ],
      ['check without condition', (b) => delete props(b, 'c1').condition, 'actions.2.properties.condition'],
      [
        'check with a bad condition',
        (b) => (props(b, 'c1').condition = { field: 'city', op: 'like', value: 1 }),
        'actions.2.properties.condition.op',
      ],
      [
        'opened naming a node that is not mail',
        (b) => (props(b, 'c1').condition = { opened: 'w1' }),
        'actions.2.properties.condition.opened',
      ],
      [
        'clicked naming no node',
        (b) => (props(b, 'c1').condition = { any: [{ tag: 'x' }, { clicked: 'zz' }] }),
        'actions.2.properties.condition.any.1.clicked',
      ],
      [
        'a condition nested too deep',
        (b) => (props(b, 'c1').condition = deep(12)),
        'actions.2.properties.condition.not.not.not.not.not.not.not.not.not.not',
      ],
      ['split without variants', (b) => (props(b, 's1').variants = {}), 'actions.3.properties.variants'],
      [
        'split variants not an object',
        (b) => (props(b, 's1').variants = [1, 2]),
        'actions.3.properties.variants',
      ],
      [
        'split with a zero weight',
        (b) => (props(b, 's1').variants = { a: 0, b: 1 }),
        'actions.3.properties.variants.a',
      ],
      [
        'split with a bad key',
        (b) => (props(b, 's1').variants = { 'a b': 1 }),
        'actions.3.properties.variants.a b',
      ],
      [
        'split with too many variants',
        (b) =>
          (props(b, 's1').variants = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`v${i}`, 1]))),
        'actions.3.properties.variants',
      ],
      ['tag without tag', (b) => (props(b, 't1').tag = ''), 'actions.4.properties.tag'],
      ['tag over 50 characters', (b) => (props(b, 't1').tag = 'x'.repeat(51)), 'actions.4.properties.tag'],
      ['untag without tag', (b) => delete props(b, 'u1').tag, 'actions.5.properties.tag'],
      ['subscribe without list', (b) => delete props(b, 'sub').list_id, 'actions.6.properties.list_id'],
      [
        'unsubscribe with a list that is no id',
        (b) => (props(b, 'uns').list_id = -1),
        'actions.7.properties.list_id',
      ],
      ['edit without fields', (b) => delete props(b, 'ed').fields, 'actions.8.properties.fields'],
      ['edit with empty fields', (b) => (props(b, 'ed').fields = {}), 'actions.8.properties.fields'],
      // Values subscribe refuses, which a run wrote as they were (a helper's fuzzing found them).
      ...(
        [
          ['country', 'Narnia'],
          ['birthday', '2026-02-30'],
          ['zip', 'x'.repeat(21)],
          ['email', 'new@example.com'],
          ['status', 2],
          ['rating', 5],
          ['tags', ['a']],
        ] as const
      ).map(([key, value]): [string, (b: Body) => unknown, string] => [
        `edit of ${key} to ${JSON.stringify(value)}`,
        (b) => (props(b, 'ed').fields = { city: 'Brno', [key]: value }),
        `actions.8.properties.fields.${key}`,
      ]),
      [
        'edit of a custom field to an object',
        (b) => (props(b, 'ed').fields = { shoe: { a: 1 } }),
        'actions.8.properties.fields',
      ],
      [
        'edit of custom fields over 5000 characters',
        (b) => (props(b, 'ed').fields = { note: 'x'.repeat(5001) }),
        'actions.8.properties.fields',
      ],
      [
        'edit of one field twice',
        (b) => (props(b, 'ed').fields = { City: 'Brno', city: 'Praha' }),
        'actions.8.properties.fields.city',
      ],
      [
        'edit of nothing but an empty custom_fields',
        (b) => (props(b, 'ed').fields = { custom_fields: {}, email: null }),
        'actions.8.properties.fields',
      ],
      [
        'edit of a nested custom field to an array',
        (b) => (props(b, 'ed').fields = { custom_fields: { shoe: [42] } }),
        'actions.8.properties.fields.custom_fields',
      ],
      ['webhook without url', (b) => delete props(b, 'wh').url, 'actions.9.properties.url'],
      ['webhook to no URL', (b) => (props(b, 'wh').url = 'not a url'), 'actions.9.properties.url'],
      ['webhook to ftp', (b) => (props(b, 'wh').url = 'ftp://example.com/'), 'actions.9.properties.url'],
      [
        'webhook with credentials',
        (b) => (props(b, 'wh').url = 'https://u:p@example.com/'),
        'actions.9.properties.url',
      ],
      [
        'webhook of an unknown method',
        (b) => (props(b, 'wh').method = 'BREW'),
        'actions.9.properties.method',
      ],
      [
        'webhook headers not an object',
        (b) => (props(b, 'wh').headers = 'x'),
        'actions.9.properties.headers',
      ],
      [
        "webhook header of the signature's",
        (b) => (props(b, 'wh').headers = { 'Webhook-Signature': 'v1,forged' }),
        'actions.9.properties.headers.Webhook-Signature',
      ],
      [
        'webhook header on two lines',
        (b) => (props(b, 'wh').headers = { 'X-A': 'a\r\nb' }),
        'actions.9.properties.headers.X-A',
      ],
      [
        'trigger without pipeline',
        (b) => delete props(b, 'tr').pipeline_id,
        'actions.10.properties.pipeline_id',
      ],
      ['sms without text', (b) => (props(b, 'x1').text = '  '), 'actions.12.properties.text'],
      [
        'sms over 1600 characters',
        (b) => (props(b, 'x1').text = 'x'.repeat(1601)),
        'actions.12.properties.text',
      ],
      ['goal without condition', (b) => delete props(b, 'g1').condition, 'actions.13.properties.condition'],
      [
        'goal with a bad timeout',
        (b) => (props(b, 'g1').timeout = { value: 1, unit: 'years' }),
        'actions.13.properties.timeout.unit',
      ],
      [
        'goal with a timeout that is no object',
        (b) => (props(b, 'g1').timeout = 5),
        'actions.13.properties.timeout',
      ],
    ]
    for (const [what, spoil, path] of cases) it(`refuses ${what}`, () => refuses(spoil, path))

    it('refuses a webhook node to a private address named outright unless private networks are allowed', () => {
      for (const url of [
        'http://127.0.0.1:8080/x',
        'http://localhost/x',
        'https://[::1]/',
        'http://10.1.2.3/',
      ]) {
        const b = base()
        props(b, 'wh').url = url
        const r = checkPipelineShape(b, { allowPrivateNetwork: false })
        assert.ok(!r.ok && r.errors['actions.9.properties.url'], url)
        assert.ok(checkPipelineShape(b, { allowPrivateNetwork: true }).ok, url)
      }
      // A name is judged when the call is made, on the address dialled.
      assert.ok(checkPipelineShape(base(), { allowPrivateNetwork: false }).ok)
    })

    it('takes numeric strings and normalises text', () => {
      const b = base()
      props(b, 'm1').template = '5'
      props(b, 'w1').value = '1.5'
      props(b, 't1').tag = ' vip '
      props(b, 'g1').timeout = { value: 2, unit: 'hours' }
      props(b, 'ed').fields = {
        ' City ': ' Brno ',
        country: 'Czech Republic',
        birthday: '1990-05-01 00:00:00',
        company: null,
        Shoe: 42,
        // Untouched fields as form editors send them: a null for a field the node cannot set is no change.
        email: null,
        tags: null,
        // Custom fields by any name, also one of a column or of a field the node cannot set.
        custom_fields: { Level: { value: 'gold', type: 'string' }, gone: null, name: 'nick', source: 'fb' },
      }
      const r = checkPipelineShape(b)
      assert.ok(r.ok, JSON.stringify(r.ok ? null : r.errors))
      const p = (id: string) => r.pipeline.actions.find((n) => n.id === id)!.properties
      assert.equal(p('m1').template, 5)
      assert.equal(p('w1').value, 1.5)
      assert.equal(p('t1').tag, 'vip')
      assert.deepEqual(p('g1').timeout, { value: 2, unit: 'hours' })
      // As subscribe stores them: the country's code, the day alone, custom field keys lower-cased.
      assert.deepEqual(p('ed').fields, {
        city: 'Brno',
        country: 'CZ',
        birthday: '1990-05-01',
        company: null,
        shoe: 42,
        custom_fields: { level: { value: 'gold', type: 'string' }, gone: null, name: 'nick', source: 'fb' },
      })
    })
  })

  describe('next and ports', () => {
    it('refuses an id that names no node', () =>
      refuses((b) => (at(b, 'nt').next = ['ghost']), 'actions.11.next.0', /names no node/))
    it('refuses a dangling id in a port', () =>
      refuses((b) => (at(b, 'c1').next = { yes: ['s1'], no: ['x1', 'ghost'] }), 'actions.2.next.no.1'))
    it('refuses an id that is not text', () => refuses((b) => (at(b, 'nt').next = [{}]), 'actions.11.next.0'))
    it('refuses a port that is not an array', () =>
      refuses((b) => (at(b, 'c1').next = { yes: 's1', no: ['x1'] }), 'actions.2.next.yes'))
    it('refuses a next of the wrong kind', () =>
      refuses((b) => (at(b, 'nt').next = 'end'), 'actions.11.next'))
    it('refuses an unknown port on check', () =>
      refuses(
        (b) => (at(b, 'c1').next = { yes: ['s1'], no: ['x1'], maybe: ['end'] }),
        'actions.2.next.maybe',
      ))
    it('refuses a port that is no variant on split', () =>
      refuses((b) => (at(b, 's1').next = { a: ['t1'], c: ['u1'] }), 'actions.3.next.c'))
    it('refuses an unknown port on mail', () =>
      refuses((b) => (at(b, 'm1').next = { default: ['w1'], bounced: ['end'] }), 'actions.0.next.bounced'))
    it('refuses an array on check', () =>
      refuses((b) => (at(b, 'c1').next = ['s1']), 'actions.2.next', /yes, no/))
    it('refuses an array on split', () => refuses((b) => (at(b, 's1').next = ['t1', 'u1']), 'actions.3.next'))
    it('refuses an object on a plain type', () =>
      refuses((b) => (at(b, 't1').next = { default: ['sub'] }), 'actions.4.next', /array/))
    it('refuses a way on from an end node', () =>
      refuses((b) => (at(b, 'end').next = ['nt']), 'actions.14.next'))
    it('bounds the ids of one port', () =>
      refuses((b) => (at(b, 'nt').next = Array.from({ length: 51 }, () => 'end')), 'actions.11.next'))
    it('takes an array on mail as its default port, ports left out, null and [] as branch ends', () => {
      const b = base()
      at(b, 'm1').next = { default: ['w1'], quarantine_skip: ['end'] }
      at(b, 'c1').next = { yes: ['s1'], no: ['x1'] }
      at(b, 'end').next = []
      assert.ok(checkPipelineShape(b).ok, 'expected: checkPipelineShape(b).ok')
      at(b, 'x1').next = null
      at(b, 'g1').next = {}
      assert.ok(errorsOf(b)['actions.13.next'], 'expected: errorsOf(b)["actions.13.next"]') // an object on goal
      at(b, 'g1').next = null
      const r = checkPipelineShape(b)
      assert.ok(r.ok, JSON.stringify(r.ok ? null : r.errors))
    })
  })

  describe('start', () => {
    it('defaults to the first node', () => {
      const b = base()
      b.actions.unshift(node('first', 'note', {}, ['m1']))
      const r = checkPipelineShape(b)
      assert.ok(r.ok && r.pipeline.start === 'first', 'expected: r.ok && r.pipeline.start === "first"')
    })
    it('must name a node', () => refuses((b) => (b.start = 'ghost'), 'start', /names no node/))
    it('must be text', () => refuses((b) => (b.start = {}), 'start'))
    it('may be any node', () => {
      const b = base()
      b.actions.unshift(node('pre', 'note', {}, ['m1']))
      // Starting at m1 leaves `pre` unreachable.
      assert.ok(
        errorsOf({ ...b, start: 'm1' })['actions.0'],
        'expected: errorsOf({ ...b, start: "m1" })["actions.0"]',
      )
      assert.ok(
        checkPipelineShape({ ...b, start: 'pre' }).ok,
        'expected: checkPipelineShape({ ...b, start: "pre" }).ok',
      )
    })
  })

  describe('reachability', () => {
    it('refuses a node no path leads to', () =>
      refuses(
        (b) => b.actions.push(node('lost', 'tag', { tag: 'x' }, ['end'])),
        'actions.15',
        /cannot be reached/,
      ))
    it('counts goals, and what follows them, as reachable', () => {
      const b = base()
      at(b, 'g1').next = ['after']
      b.actions.push(node('after', 'tag', { tag: 'won' }, ['end']))
      assert.ok(checkPipelineShape(b).ok, 'expected: checkPipelineShape(b).ok')
    })
  })

  describe('cycles', () => {
    it('refuses a cycle with no wait on it', () =>
      refuses((b) => (at(b, 'nt').next = ['sub']), 'actions.11.next.0', /cycle/))
    it('refuses a node leading to itself', () =>
      refuses((b) => (at(b, 'nt').next = ['nt']), 'actions.11.next.0'))
    it('refuses a cycle through a goal without a timeout', () =>
      refuses((b) => {
        at(b, 'g1').next = ['nt']
        at(b, 'nt').next = ['g1']
      }, 'actions.13.next.0'))
    it('takes a cycle through a wait', () => {
      const b = base()
      at(b, 'nt').next = ['w1']
      assert.ok(checkPipelineShape(b).ok, 'expected: checkPipelineShape(b).ok')
    })
    it('takes a cycle through a goal with a timeout', () => {
      const b = base()
      props(b, 'g1').timeout = { value: 1, unit: 'days' }
      at(b, 'g1').next = ['nt']
      at(b, 'nt').next = ['g1']
      assert.ok(checkPipelineShape(b).ok, 'expected: checkPipelineShape(b).ok')
    })
    it('finds a cycle behind a branch', () => refuses((b) => (at(b, 'u1').next = ['s1']), 'actions.5.next.0'))
  })
})

/** A chain of `not`s, `levels` conditions deep. */
function deep(levels: number): unknown {
  let c: unknown = { tag: 'x' }
  for (let i = 1; i < levels; i++) c = { not: c }
  return c
}

describe('validatePipeline', () => {
  const lookup = (have: { templates?: number[]; lists?: number[]; pipelines?: number[] }): RefLookup => ({
    templates: async (ids) => new Set(ids.filter((id) => have.templates?.includes(id))),
    lists: async (ids) => new Set(ids.filter((id) => have.lists?.includes(id))),
    pipelines: async (ids) => new Set(ids.filter((id) => have.pipelines?.includes(id))),
  })
  const all = { templates: [5], lists: [1, 2, 3], pipelines: [9] }

  it('accepts a graph whose references all exist', async () => {
    const r = await validatePipeline(base(), lookup(all))
    assert.ok(r.ok, JSON.stringify(r.ok ? null : r.errors))
  })

  it('names each missing reference', async () => {
    const cases: [Partial<typeof all>, string][] = [
      [{ ...all, templates: [] }, 'actions.0.properties.template'],
      [{ ...all, lists: [2, 3] }, 'list_id'],
      [{ ...all, lists: [1, 3] }, 'actions.6.properties.list_id'],
      [{ ...all, lists: [1, 2] }, 'actions.7.properties.list_id'],
      [{ ...all, pipelines: [] }, 'actions.10.properties.pipeline_id'],
    ]
    for (const [have, path] of cases) {
      const r = await validatePipeline(base(), lookup(have))
      assert.ok(!r.ok && r.errors[path], `${path}: ${JSON.stringify(r.ok ? null : r.errors)}`)
      assert.deepEqual(Object.keys(r.errors), [path])
    }
  })

  it('reports shape errors and missing references together', async () => {
    const b = base()
    b.name = ''
    const r = await validatePipeline(b, lookup({ ...all, templates: [] }))
    assert.ok(!r.ok, 'expected: !r.ok')
    assert.deepEqual(Object.keys(r.errors).sort(), ['actions.0.properties.template', 'name'])
  })
})
