import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from '@sinclair/typebox'
import { FINITE_KEYWORD, withFiniteNumbers } from './finite-numbers.js'

describe('withFiniteNumbers', () => {
  const schema = Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    amount: Type.Union([Type.Number(), Type.String()]),
    mixed: Type.Unsafe<number | string>({ type: ['number', 'string', 'null'] }),
    ids: Type.Array(Type.Integer()),
    nested: Type.Object({ at: Type.Integer(), name: Type.String() }),
    kind: Type.Literal(3),
    // Properties named like keywords are properties: `type` names no type, `default` holds a schema.
    type: Type.String(),
    default: Type.Integer(),
  })

  it('puts the keyword on every number and integer schema, nested ones too, and on nothing else', () => {
    const marked = withFiniteNumbers(schema) as unknown as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any -- reads the JSON Schema copy by path
    const p = marked.properties
    assert.equal(p.page[FINITE_KEYWORD], true)
    assert.equal(p.page.default, 1)
    assert.equal(p.amount.anyOf[0][FINITE_KEYWORD], true)
    assert.equal(p.amount.anyOf[1][FINITE_KEYWORD], undefined)
    assert.equal(p.mixed[FINITE_KEYWORD], true)
    assert.equal(p.ids.items[FINITE_KEYWORD], true)
    assert.equal(p.ids[FINITE_KEYWORD], undefined)
    assert.equal(p.nested.properties.at[FINITE_KEYWORD], true)
    assert.equal(p.nested.properties.name[FINITE_KEYWORD], undefined)
    assert.equal(p.type[FINITE_KEYWORD], undefined)
    assert.equal(p.default[FINITE_KEYWORD], true)
    assert.equal(marked[FINITE_KEYWORD], undefined)
  })

  it('leaves the schema it was given alone and makes one copy of it', () => {
    const marked = withFiniteNumbers(schema)
    assert.notEqual(marked, schema)
    assert.equal(JSON.stringify(schema).includes(FINITE_KEYWORD), false, 'the original schema is unchanged')
    assert.equal(
      withFiniteNumbers(schema),
      marked,
      'the same copy for the same schema (Ajv caches by object)',
    )
  })
})
