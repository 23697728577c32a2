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

describe('values checked before anything starts', () => {
  it('refuses ports out of range, a log level pino lacks and DNS servers that are no addresses, naming each', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: '70000' }, /^PORT must be an integer from 0 to 65535, got "70000"$/],
      [{ BOUNCE_SMTP_PORT: '99999' }, /^BOUNCE_SMTP_PORT must be an integer from 1 to 65535, got "99999"$/],
      [
        { LOG_LEVEL: 'verbose' },
        /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/,
      ],
      [{ DNS_SERVERS: '127.0.0.1, garbage' }, /^DNS_SERVERS must be IP addresses/],
    ]
    for (const [env, message] of cases)
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        JSON.stringify(env),
      )
  })

  it('takes what they allow, and an empty ROLE as unset', () => {
    const c = loadConfig({ PORT: '0', LOG_LEVEL: 'WARN', DNS_SERVERS: '127.0.0.1:5300, [::1]:53', ROLE: '' })
    assert.deepEqual(
      [c.port, c.logLevel, c.dnsServers, c.role],
      [0, 'warn', ['127.0.0.1:5300', '[::1]:53'], 'all'],
    )
  })
})
