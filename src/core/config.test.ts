import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from './config.js'

describe('switches in the environment', () => {
  it('runs hot statements prepared unless DB_PREPARED_STATEMENTS turns them off', () => {
    assert.equal(loadConfig({}).dbPreparedStatements, true)
    assert.equal(loadConfig({ DB_PREPARED_STATEMENTS: '' }).dbPreparedStatements, true)
    for (const off of ['0', 'false', 'No', 'off'])
      assert.equal(loadConfig({ DB_PREPARED_STATEMENTS: off }).dbPreparedStatements, false, off)
    assert.equal(loadConfig({ DB_PREPARED_STATEMENTS: 'yes' }).dbPreparedStatements, true)
  })

  it('refuses a value that is neither an "on" nor an "off" word, naming the switch', () => {
    assert.throws(
      () => loadConfig({ DB_PREPARED_STATEMENTS: 'fasle' }),
      (e: unknown) => e instanceof ConfigError && /DB_PREPARED_STATEMENTS.*"fasle"/.test(e.message),
    )
    assert.throws(
      () => loadConfig({ ALLOW_PRIVATE_NETWORK: 'ture' }),
      (e: unknown) => e instanceof ConfigError && /ALLOW_PRIVATE_NETWORK.*"ture"/.test(e.message),
    )
  })

  it('keeps an off-by-default switch off unless an "on" word turns it on', () => {
    assert.equal(loadConfig({}).allowPrivateNetwork, false)
    assert.equal(loadConfig({ ALLOW_PRIVATE_NETWORK: ' ' }).allowPrivateNetwork, false)
    assert.equal(loadConfig({ ALLOW_PRIVATE_NETWORK: 'off' }).allowPrivateNetwork, false)
    assert.equal(loadConfig({ ALLOW_PRIVATE_NETWORK: '0' }).allowPrivateNetwork, false)
    assert.equal(loadConfig({ ALLOW_PRIVATE_NETWORK: 'TRUE' }).allowPrivateNetwork, true)
    assert.equal(loadConfig({ ALLOW_PRIVATE_NETWORK: 'on' }).allowPrivateNetwork, true)
  })
})
