import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { HttpError } from '../../core/http/errors.js'
import { parseCondition, requireCondition, walkCondition, type Condition } from './condition.js'

function ok(input: unknown): Condition {
  const r = parseCondition(input, 'filter')
  assert.ok(r.ok, `expected a valid condition, got ${JSON.stringify(r.ok ? null : r.errors)}`)
  return r.condition
}

function errors(input: unknown, path = 'filter'): Record<string, string[]> {
  const r = parseCondition(input, path)
  assert.equal(r.ok, false, 'expected errors')
  return r.ok ? {} : r.errors
}

/** A chain of `not`s, `levels` conditions deep in all. */
function nested(levels: number): unknown {
  let c: unknown = { tag: 'x' }
  for (let i = 1; i < levels; i++) c = { not: c }
  return c
}

describe('parseCondition', () => {
  it('accepts every kind of the language and normalises it', () => {
    const input = {
      all: [
        { field: ' City ', op: 'eq', value: 'Praha' },
        { field: 'EMAIL', op: 'eq', value: ' A@Shop.CZ ' },
        { field: 'age', op: 'gt', value: 30 },
        { field: 'vip', op: 'eq', value: true },
        { field: 'phone', op: 'exists' },
        { field: 'company', op: 'exists', value: false },
        { any: [{ tag: ' vip ' }, { opened: 'a1' }, { clicked: 7 }] },
        { not: { purchased: { days: '30' } } },
        { event: { category: 'shop', action: 'view' } },
        { event: { category: 'shop' } },
        { in_list: '3' },
      ],
    }
    assert.deepEqual(ok(input), {
      all: [
        { field: 'city', op: 'eq', value: 'Praha' },
        { field: 'email', op: 'eq', value: 'a@shop.cz' },
        { field: 'age', op: 'gt', value: 30 },
        { field: 'vip', op: 'eq', value: true },
        { field: 'phone', op: 'exists' },
        { field: 'company', op: 'exists', value: false },
        { any: [{ tag: 'vip' }, { opened: 'a1' }, { clicked: '7' }] },
        { not: { purchased: { days: 30 } } },
        { event: { category: 'shop', action: 'view' } },
        { event: { category: 'shop' } },
        { in_list: 3 },
      ],
    })
  })

  it('names a missing or non-object condition by its path', () => {
    assert.deepEqual(errors(undefined), { filter: ['The filter field is required.'] })
    assert.deepEqual(errors(null), { filter: ['The filter field is required.'] })
    assert.deepEqual(errors('vip'), { filter: ['The filter must be a condition object.'] })
    assert.deepEqual(errors([{ tag: 'x' }]), { filter: ['The filter must be a condition object.'] })
    assert.deepEqual(errors({ all: [{ tag: 'a' }, 5] }), {
      'filter.all.1': ['The all.1 must be a condition object.'],
    })
  })

  it('wants exactly one kind per node and no unknown keys', () => {
    const one =
      'must have exactly one of: all, any, not, field, tag, opened, clicked, purchased, event, in_list.'
    assert.deepEqual(errors({}), { filter: [`The filter ${one}`] })
    assert.deepEqual(errors({ colour: 'red' }), { filter: [`The filter ${one}`] })
    assert.deepEqual(errors({ tag: 'a', opened: 'b' }), { filter: [`The filter ${one}`] })
    assert.deepEqual(errors({ tag: 'a', extra: 1 }), { 'filter.extra': ['The extra field is not allowed.'] })
    assert.deepEqual(errors({ field: 'city', op: 'eq', value: 'x', val: 'y' }), {
      'filter.val': ['The val field is not allowed.'],
    })
  })

  it('checks all and any lists', () => {
    assert.deepEqual(errors({ all: 'x' }), { 'filter.all': ['The all must be an array.'] })
    assert.deepEqual(errors({ any: [] }), { 'filter.any': ['The any must have at least 1 items.'] })
    const many = Array.from({ length: 101 }, () => ({ tag: 'x' }))
    assert.deepEqual(errors({ all: many }), { 'filter.all': ['The all must not have more than 100 items.'] })
  })

  it('reports every bad field condition at its own path', () => {
    assert.deepEqual(errors({ all: [{ field: 'city', value: 'x' }] }), {
      'filter.all.0.op': ['The op field is required.'],
    })
    assert.deepEqual(errors({ all: [{ tag: 'ok' }, { field: 'city', op: 'like', value: 'x' }] }), {
      'filter.all.1.op': ['The selected op is invalid.'],
    })
    assert.deepEqual(errors({ field: '', op: 'eq', value: 'x' }), {
      'filter.field': ['The field field is required.'],
    })
    assert.deepEqual(errors({ field: { a: 1 }, op: 'eq', value: 'x' }), {
      'filter.field': ['The field must be a string.'],
    })
    assert.deepEqual(errors({ field: 'f'.repeat(101), op: 'eq', value: 'x' }), {
      'filter.field': ['The field must not be greater than 100 characters.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'eq' }), {
      'filter.value': ['The value field is required.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'contains', value: '' }), {
      'filter.value': ['The value field is required.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'eq', value: ['a'] }), {
      'filter.value': ['The value must be a string, number or boolean.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'gt', value: true }), {
      'filter.value': ['The value must be a string or number.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'contains', value: { a: 1 } }), {
      'filter.value': ['The value must be a string or number.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'exists', value: 'yes' }), {
      'filter.value': ['The value must be of type boolean.'],
    })
    assert.deepEqual(errors({ field: 'city', op: 'eq', value: 'x'.repeat(1001) }), {
      'filter.value': ['The value must not be greater than 1000 characters.'],
    })
    // Both parts of one node at once.
    assert.deepEqual(errors({ not: { field: 7.5, op: 'near' } }), {
      'filter.not.op': ['The selected op is invalid.'],
    })
    assert.deepEqual(errors({ not: { field: '', op: 'near' } }), {
      'filter.not.field': ['The field field is required.'],
      'filter.not.op': ['The selected op is invalid.'],
    })
  })

  it('checks tags, mail node ids, purchases, events and lists', () => {
    assert.deepEqual(errors({ tag: '' }), { 'filter.tag': ['The tag field is required.'] })
    assert.deepEqual(errors({ tag: ['a'] }), { 'filter.tag': ['The tag must be a string.'] })
    assert.deepEqual(errors({ tag: 't'.repeat(51) }), {
      'filter.tag': ['The tag must not be greater than 50 characters.'],
    })
    assert.deepEqual(errors({ opened: null }), { 'filter.opened': ['The opened field is required.'] })
    assert.deepEqual(errors({ clicked: true }), { 'filter.clicked': ['The clicked must be a string.'] })
    assert.deepEqual(errors({ purchased: 30 }), {
      'filter.purchased': ['The purchased must be an object with days.'],
    })
    assert.deepEqual(errors({ purchased: {} }), {
      'filter.purchased.days': ['The days field is required.'],
    })
    assert.deepEqual(errors({ purchased: { days: 1.5 } }), {
      'filter.purchased.days': ['The days must be an integer.'],
    })
    assert.deepEqual(errors({ purchased: { days: 0 } }), {
      'filter.purchased.days': ['The days must be at least 1.'],
    })
    assert.deepEqual(errors({ purchased: { days: 3651 } }), {
      'filter.purchased.days': ['The days must not be greater than 3650.'],
    })
    assert.deepEqual(errors({ purchased: { days: 3, weeks: 1 } }), {
      'filter.purchased.weeks': ['The weeks field is not allowed.'],
    })
    assert.deepEqual(errors({ event: 'shop' }), {
      'filter.event': ['The event must be an object with a category.'],
    })
    assert.deepEqual(errors({ event: { action: 'view' } }), {
      'filter.event.category': ['The category field is required.'],
    })
    assert.deepEqual(errors({ event: { category: 'shop', action: [] } }), {
      'filter.event.action': ['The action must be a string.'],
    })
    assert.deepEqual(errors({ event: { category: 'shop', label: 'x' } }), {
      'filter.event.label': ['The label field is not allowed.'],
    })
    assert.deepEqual(errors({ in_list: 'three' }), { 'filter.in_list': ['The in_list must be an integer.'] })
    assert.deepEqual(errors({ in_list: 0 }), { 'filter.in_list': ['The in_list must be at least 1.'] })
    assert.deepEqual(errors({ in_list: 2147483648 }), {
      'filter.in_list': ['The in_list must not be greater than 2147483647.'],
    })
  })

  it('reports errors of several branches together', () => {
    assert.deepEqual(errors({ any: [{ tag: '' }, { all: [{ in_list: -1 }, { field: 'x', op: 'eq' }] }] }), {
      'filter.any.0.tag': ['The tag field is required.'],
      'filter.any.1.all.0.in_list': ['The in_list must be at least 1.'],
      'filter.any.1.all.1.value': ['The value field is required.'],
    })
  })

  it('bounds depth and size', () => {
    ok(nested(10))
    const deep = errors(nested(11))
    assert.deepEqual(Object.keys(deep), [`filter${'.not'.repeat(10)}`])
    assert.match(Object.values(deep)[0]![0]!, /more than 10 levels deep/)

    const wide = { all: Array.from({ length: 100 }, () => ({ any: [{ tag: 'a' }, { tag: 'b' }] })) }
    const big = errors(wide)
    assert.equal(Object.keys(big).length, 1)
    assert.match(Object.values(big)[0]![0]!, /not have more than 200 conditions/)
  })

  it('uses the path it is given', () => {
    assert.deepEqual(errors({ tag: '' }, 'actions.2.properties.condition'), {
      'actions.2.properties.condition.tag': ['The tag field is required.'],
    })
  })

  it('requireCondition throws the contract 422', () => {
    assert.deepEqual(requireCondition({ tag: 'a' }, 'filter'), { tag: 'a' })
    assert.throws(
      () => requireCondition({ tag: '' }, 'condition'),
      (err: unknown) =>
        err instanceof HttpError &&
        err.statusCode === 422 &&
        JSON.stringify(err.body) ===
          JSON.stringify({ errors: { 'condition.tag': ['The tag field is required.'] } }),
    )
  })

  it('walkCondition visits every node with its path', () => {
    const seen: string[] = []
    walkCondition(ok({ all: [{ tag: 'a' }, { not: { any: [{ in_list: 1 }] } }] }), 'filter', (_c, p) =>
      seen.push(p),
    )
    assert.deepEqual(seen, [
      'filter',
      'filter.all.0',
      'filter.all.1',
      'filter.all.1.not',
      'filter.all.1.not.any.0',
    ])
  })
})
