import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { couponTags, utcDay } from './coupon-vars.js'

describe('coupon tags', () => {
  it('groups the variable names a mail reads by folder, leaving out arguments that are no folder id', () => {
    const tags = couponTags([
      'Subject *|COUPON:12|*',
      '<a href="https://x.example/?c=*|coupon:012|*">*|COUPON:12|*</a> *|COUPON:abc|* *|COUPON:0|*',
      '*|COUPON:99999999999|* {*|COUPON: 5 |*}',
      null,
    ])
    assert.deepEqual(
      [...tags.entries()],
      [
        [12, ['coupon:12', 'coupon:012']],
        [5, ['coupon:5']],
      ],
    )
    assert.equal(couponTags(['<p>*|name|*</p>']).size, 0)
  })

  it('takes the UTC day, whatever the local time', () => {
    assert.equal(utcDay(new Date('2026-11-22T23:59:59.999Z')), '2026-11-22')
    assert.equal(utcDay(new Date('2026-11-23T00:00:00+01:00')), '2026-11-22')
  })
})
