import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isDatabaseUnavailable } from './errors.js'

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code })

describe('isDatabaseUnavailable', () => {
  it('names a lost or refused connection, however the driver words it, and nothing else', () => {
    for (const err of [
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('08006'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('ECONNREFUSED'),
      new Error('Connection terminated unexpectedly'),
      // drizzle wraps the driver's error in `cause`.
      new Error('Failed query: select 1', { cause: withCode('08P01') }),
      new Error('Failed query: select 1', { cause: new Error('Client was closed and is not queryable') }),
    ])
      assert.equal(isDatabaseUnavailable(err), true, String(err))
    for (const err of [
      withCode('23505', 'duplicate key'),
      withCode('40P01', 'deadlock detected'),
      withCode('ENOENT'),
      new Error('the template engine fell over'),
      'Connection terminated',
    ])
      assert.equal(isDatabaseUnavailable(err), false, String(err))
  })
})
