import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { compileTemplate, mergeVars, renderHeader, tagArguments } from './merge-tags.js'

const data = (
  vars: Record<string, string | number | null>,
  special?: (n: string, a?: string) => string | undefined,
) => ({
  vars: mergeVars(vars),
  special,
})

describe('merge tags', () => {
  it('inserts escaped values in HTML and raw ones with braces', () => {
    const t = compileTemplate('<p>Hi *|name|*, {*|bio|*} and *|bio|*</p>')
    const out = t.render(data({ name: 'A & <B>', bio: '<b>x</b>' }), 'html')
    assert.equal(out, '<p>Hi A &amp; &lt;B&gt;, <b>x</b> and &lt;b&gt;x&lt;/b&gt;</p>')
  })

  it('does not escape in text mode', () => {
    assert.equal(compileTemplate('Hi *|NAME|*').render(data({ name: 'A & B' }), 'text'), 'Hi A & B')
  })

  it('is case-insensitive and renders unknown tags empty', () => {
    const t = compileTemplate('*|Name|*-*|nAmE|*-*|missing|*-')
    assert.equal(t.render(data({ NAME: 'x' }), 'html'), 'x-x--')
  })

  it('reads custom fields, scalar or {value,type}, and lets subscriber fields win', () => {
    const vars = mergeVars(
      { name: 'Field' },
      { Plan: { value: 'pro', type: 'string' }, score: 3, name: 'custom' },
    )
    assert.equal(compileTemplate('*|plan|* *|SCORE|* *|name|*').render({ vars }, 'text'), 'pro 3 Field')
  })

  it('chooses IF/ELSE branches, nested', () => {
    const t = compileTemplate('*|IF:vip|*V*|IF:city|*(*|city|*)*|END:IF|**|ELSE:|*N*|END:IF|*!')
    assert.equal(t.render(data({ vip: 1, city: 'Brno' }), 'text'), 'V(Brno)!')
    assert.equal(t.render(data({ vip: 1, city: '' }), 'text'), 'V!')
    assert.equal(t.render(data({ vip: '0' }), 'text'), 'N!')
    assert.equal(t.render(data({}), 'text'), 'N!')
  })

  it('keeps what follows an IF that is never closed, its tags rendering nothing', () => {
    const t = compileTemplate('A*|IF:vip|*B*|IF:city|*C*|END:IF|*D*|ELSE:|*E *|UNSUB|*')
    const special = (n: string) => (n === 'UNSUB' ? 'u' : undefined)
    assert.equal(t.render(data({}, special), 'text'), 'ABDE u')
    assert.equal(t.render(data({ vip: 1, city: 'x' }, special), 'text'), 'ABCDE u')
    const parts: (number | string)[] = []
    t.renderParts(data({}, special), 'text', parts)
    assert.equal(parts.map((p) => (typeof p === 'number' ? t.texts[p] : p)).join(''), 'ABDE u')
  })

  it('hands special tags to the caller with their argument', () => {
    const calls: string[] = []
    const t = compileTemplate('<a href="*|UNSUB|*">u</a> *|coupon:12|* *|EMAIL|*')
    const out = t.render(
      data({ email: 'a@b.cz' }, (n, a) => {
        calls.push(`${n}:${a ?? ''}`)
        if (n === 'UNSUB') return 'https://x/u?a=1&b=2'
        if (n === 'COUPON') return `CODE-${a}`
        return undefined
      }),
      'html',
    )
    assert.equal(out, '<a href="https://x/u?a=1&amp;b=2">u</a> CODE-12 a@b.cz')
    assert.ok(calls.includes('UNSUB:') && calls.includes('COUPON:12'))
  })

  it('never lets a merged value break a header line', () => {
    const t = compileTemplate('Hello *|name|*')
    assert.equal(renderHeader(t, data({ name: 'x\r\nBcc: victim@x.cz' })), 'Hello x Bcc: victim@x.cz')
  })

  it('lists the names it uses', () => {
    assert.deepEqual([...compileTemplate('*|a|* {*|B|*} *|IF:c|**|END:IF|*').names].sort(), ['a', 'b', 'c'])
  })

  it('says when every tag is one escaped value under a name without blanks', () => {
    for (const source of ['no tags', 'Hi *|name|*, *|UNSUB|* *|COUPON:12|* *|order|*'])
      assert.equal(compileTemplate(source).plainValuesOnly, true, source)
    for (const source of [
      'Hi {*|name|*}',
      '*|IF:x|*a*|ELSE:|*b*|END:IF|*',
      'stray *|END:IF|*',
      'Hi *|first name|*',
      'Hi *| name |*',
      '*|RECOMMEND:1:3|*',
    ])
      assert.equal(compileTemplate(source).plainValuesOnly, false, source)
  })

  it('never renders Object prototype members', () => {
    const t = compileTemplate('[*|constructor|*][*|toString|*][*|IF:__proto__|*x*|END:IF|*]')
    assert.equal(t.render(data({}), 'text'), '[][][]')
    assert.equal(t.render({ vars: { name: 'a' } }, 'text'), '[][][]')
  })

  it('finds the arguments of a special tag as the renderer reads them, and renders them from vars', () => {
    const sources = [
      'Code *|COUPON:12|* and {*| coupon : 7 |*}',
      null,
      '*|COUPON:12|* *|COUPONS:3|* *|coupon|*',
    ]
    assert.deepEqual(tagArguments(sources, 'coupon'), ['12', '7'])
    assert.deepEqual(tagArguments(['no tags here', undefined], 'COUPON'), [])
    const t = compileTemplate('[*|COUPON:12|*][{*| coupon : 7 |*}][*|coupon:99|*]')
    assert.equal(t.render({ vars: { 'coupon:12': 'A&B', 'coupon:7': '<i>' } }, 'html'), '[A&amp;B][<i>][]')
  })
})
