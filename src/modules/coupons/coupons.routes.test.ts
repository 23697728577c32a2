import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { queryRows } from '../../core/db/sql.js'
import { assignCouponVars, couponTags } from './coupon-vars.js'

describe('coupons: folders, import, delete', async () => {
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()
  const codesOf = (folderId: number) =>
    queryRows<{ code: string; valid_until: string | null }>(
      t.ctx.db,
      sql`SELECT code, to_char(valid_until, 'YYYY-MM-DD') AS valid_until FROM coupons
          WHERE folder_id = ${folderId} ORDER BY id`,
    )

  it('gives every account one default folder, made on first use', async () => {
    const first = await t.req('GET', '/coupons/folders')
    assert.equal(first.status, 200)
    assert.equal(first.body.length, 1)
    const [folder] = first.body
    assert.equal(folder.name, 'Default')
    assert.equal(folder.default, true)
    assert.deepEqual([folder.total, folder.available, folder.assigned, folder.missed], [0, 0, 0, 0])
    assert.match(folder.created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    // Asked again (or at once), still one.
    await Promise.all([t.req('GET', '/coupons/folders'), t.req('GET', '/coupons/folders')])
    assert.equal((await t.req('GET', '/coupons/folders')).body.length, 1)
  })

  it('creates folders, listed after the default one', async () => {
    const res = await t.req('POST', '/coupons/folders', { body: { name: '  Black Friday ' } })
    assert.equal(res.status, 200)
    assert.equal(res.body.name, 'Black Friday')
    assert.equal(res.body.default, false)
    assert.equal(res.body.total, 0)
    const list = (await t.req('GET', '/coupons/folders')).body as { id: number; default: boolean }[]
    assert.equal(list[0]!.default, true)
    assert.ok(list.some((f) => f.id === res.body.id))
  })

  it('refuses a folder without a name', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }]) {
      const res = await t.req('POST', '/coupons/folders', { body })
      assert.equal(res.status, 422)
      assert.deepEqual(Object.keys(res.body.errors), ['name'])
    }
  })

  it('imports into the default folder, trimming codes, counting repeats as duplicated', async () => {
    const res = await t.req('POST', '/coupons/import', {
      body: { codes: [' kod1', 'kod2 ', 'kod1', 'kod3'] },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { imported: 3, duplicated: 1, totalCount: 3 })
    const def = (await t.req('GET', '/coupons/folders')).body[0]
    assert.deepEqual(
      (await codesOf(def.id)).map((c) => c.code),
      ['kod1', 'kod2', 'kod3'],
    )
    assert.equal(def.total, 3)
    assert.equal(def.available, 3)
  })

  it('leaves existing codes alone by default; update_existing sets their valid_until', async () => {
    const folder = (await t.req('POST', '/coupons/folders', { body: { name: 'Upd' } })).body.id as number
    const first = await t.req('POST', '/coupons/import', {
      body: { folderId: folder, codes: ['A', 'B'], valid_until: '2030-01-31' },
    })
    assert.deepEqual(first.body, { imported: 2, duplicated: 0, totalCount: 2 })
    const again = await t.req('POST', '/coupons/import', {
      body: { folderId: folder, codes: ['B', 'C'], valid_until: '2031-06-30' },
    })
    assert.deepEqual(again.body, { imported: 1, duplicated: 1, totalCount: 3 })
    assert.deepEqual(await codesOf(folder), [
      { code: 'A', valid_until: '2030-01-31' },
      { code: 'B', valid_until: '2030-01-31' },
      { code: 'C', valid_until: '2031-06-30' },
    ])
    const updated = await t.req('POST', '/coupons/import', {
      body: { folderId: folder, codes: ['A', 'D'], valid_until: '2032-12-31', update_existing: true },
    })
    assert.deepEqual(updated.body, { imported: 2, duplicated: 0, totalCount: 4 })
    assert.deepEqual(await codesOf(folder), [
      { code: 'A', valid_until: '2032-12-31' },
      { code: 'B', valid_until: '2030-01-31' },
      { code: 'C', valid_until: '2031-06-30' },
      { code: 'D', valid_until: '2032-12-31' },
    ])
    // update_existing without valid_until: the code no longer expires. '1' as PHP clients send a setting.
    const php = await t.req('POST', '/coupons/import', {
      body: { folderId: folder, codes: ['B'], update_existing: '1' },
    })
    assert.equal(php.status, 200, php.text)
    assert.equal((await codesOf(folder))[1]!.valid_until, null)
  })

  it('keeps codes unique per folder, not per account', async () => {
    const a = (await t.req('POST', '/coupons/folders', { body: { name: 'A' } })).body.id as number
    const b = (await t.req('POST', '/coupons/folders', { body: { name: 'B' } })).body.id as number
    for (const folderId of [a, b]) {
      const res = await t.req('POST', '/coupons/import', { body: { folderId, codes: ['SAME'] } })
      assert.deepEqual(res.body, { imported: 1, duplicated: 0, totalCount: 1 })
    }
  })

  it('validates codes, valid_until and update_existing, naming the field and writing nothing', async () => {
    const folder = (await t.req('POST', '/coupons/folders', { body: { name: 'Bad' } })).body.id as number
    const cases: [unknown, string][] = [
      [{ folderId: folder }, 'codes'],
      [{ folderId: folder, codes: [] }, 'codes'],
      [{ folderId: folder, codes: {} }, 'codes'],
      [{ folderId: folder, codes: ['ok', '  '] }, 'codes.1'],
      [{ folderId: folder, codes: ['ok', 'x'.repeat(256)] }, 'codes.1'],
      [{ folderId: folder, codes: ['line\nbreak'] }, 'codes.0'],
      [{ folderId: folder, codes: ['ok', { a: 1 }] }, 'codes.1'],
      [{ folderId: folder, codes: Array.from({ length: 10_001 }, (_, i) => `c${i}`) }, 'codes'],
      [{ folderId: folder, codes: ['ok'], valid_until: '31.12.2030' }, 'valid_until'],
      [{ folderId: folder, codes: ['ok'], valid_until: '2030-02-30' }, 'valid_until'],
      [{ folderId: folder, codes: ['ok'], update_existing: 'perhaps' }, 'update_existing'],
      [{ folderId: 'x', codes: ['ok'] }, 'folderId'],
    ]
    for (const [body, field] of cases) {
      const res = await t.req('POST', '/coupons/import', { body })
      assert.equal(res.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`)
      assert.ok(res.body.errors[field], `${field} in ${res.text}`)
    }
    assert.deepEqual(await codesOf(folder), [])
  })

  it("answers 404 for an unknown folder and another account's folder", async () => {
    const mine = (await t.req('POST', '/coupons/folders', { body: { name: 'Mine' } })).body.id as number
    await t.req('POST', '/coupons/import', { body: { folderId: mine, codes: ['M1'] } })
    for (const [method, path] of [
      ['POST', '/coupons/import'],
      ['DELETE', '/coupons/delete'],
    ] as const) {
      for (const [folderId, key] of [
        [999_999, t.account.key],
        [mine, other.key],
      ] as const) {
        const res = await t.req(method, path, { body: { folderId, codes: ['M1'] }, key })
        assert.equal(res.status, 404, res.text)
        assert.deepEqual(res.body, { message: 'Coupon folder not found' })
      }
    }
    assert.deepEqual(
      (await codesOf(mine)).map((c) => c.code),
      ['M1'],
    )
    const theirs = (await t.req('GET', '/coupons/folders', { key: other.key })).body as { id: number }[]
    assert.ok(!theirs.some((f) => f.id === mine))
    for (const [method, path] of [
      ['GET', '/coupons/folders'],
      ['POST', '/coupons/folders'],
      ['POST', '/coupons/import'],
      ['DELETE', '/coupons/delete'],
    ] as const) {
      assert.equal((await t.req(method, path, { key: null, body: {} })).status, 401)
    }
  })

  it('deletes codes, counting those the folder does not hold as invalid, a repeated code once', async () => {
    const folder = (await t.req('POST', '/coupons/folders', { body: { name: 'Del' } })).body.id as number
    await t.req('POST', '/coupons/import', { body: { folderId: folder, codes: ['D1', 'D2', 'D3'] } })
    const res = await t.req('DELETE', '/coupons/delete', {
      body: { folderId: folder, codes: [' D1', 'D3', 'NOPE', 'D1', 'NOPE'] },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { deleted: 2, invalid: 1 })
    assert.deepEqual(
      (await codesOf(folder)).map((c) => c.code),
      ['D2'],
    )
    // Without folderId: the default folder.
    await t.req('POST', '/coupons/import', { body: { codes: ['DEF-DEL'] } })
    assert.deepEqual((await t.req('DELETE', '/coupons/delete', { body: { codes: ['DEF-DEL'] } })).body, {
      deleted: 1,
      invalid: 0,
    })
    const bad = await t.req('DELETE', '/coupons/delete', { body: { folderId: folder, codes: [] } })
    assert.equal(bad.status, 422)
    assert.ok(bad.body.errors.codes)
  })

  it('counts a mail as missed only while it has no code: sent again after a refill, it is not', async () => {
    const folder = (await t.req('POST', '/coupons/folders', { body: { name: 'Dry' } })).body.id as number
    const tags = couponTags([`*|COUPON:${folder}|*`])
    // A mail rendered while the folder was empty, then sent again (a deferral) after the shop refilled it.
    const mail = { accountId: t.account.id, campaignId: 0, messageIds: [424242] }
    assert.equal((await assignCouponVars(t.ctx, tags, mail)).get(424242)![`coupon:${folder}`], '')
    const missed = async () =>
      ((await t.req('GET', '/coupons/folders')).body as { id: number; missed: number }[]).find(
        (f) => f.id === folder,
      )?.missed
    assert.equal(await missed(), 1)
    await t.req('POST', '/coupons/import', { body: { folderId: folder, codes: ['LATE'] } })
    assert.equal((await assignCouponVars(t.ctx, tags, mail)).get(424242)![`coupon:${folder}`], 'LATE')
    assert.equal(await missed(), 0)
  })
})
