import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { startTestApp } from '../../../test/helpers/app.js'
import { loadConfig } from '../config.js'
import { createLogger } from '../context.js'
import { loggablePath } from './log-path.js'

/** A stream that keeps every line written to it. */
function lineSink() {
  const lines: string[] = []
  let rest = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const parts = (rest + chunk.toString('utf8')).split('\n')
      rest = parts.pop() ?? ''
      lines.push(...parts.filter((l) => l !== ''))
      done()
    },
  })
  return { stream, lines }
}

// Token-shaped values (base64url payload and MAC) long enough that their first 6 characters are no token.
const TOKEN = 'MTIzNDU2Nzg.q1w2e3r4t5y6u7i8o9p0AaSsDdFfGgHhJj'

describe('debug request log', async () => {
  const sink = lineSink()
  const log = createLogger({ ...loadConfig({}), logLevel: 'debug' }, { tty: false, destination: sink.stream })
  const t = await startTestApp({ log, worker: false })

  it('cuts the capability token of every page linked from mail, and keeps other paths whole', async () => {
    const paths = [
      `/confirm/${TOKEN}`,
      `/u/${TOKEN}`,
      `/archive/${TOKEN}`,
      `/w/${TOKEN}`,
      `/t/o/${TOKEN}.gif`,
      `/t/c/${TOKEN}?utm=x`,
    ]
    for (const path of paths) await t.req('GET', path, { key: null })
    await t.req('POST', `/u/${TOKEN}`, { key: null, body: 'List-Unsubscribe=One-Click' })
    await t.req('GET', '/lists/12?page=2')

    const requests = sink.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request')
    const urls = requests.map((r) => r.url)
    assert.deepEqual(urls, [
      '/confirm/MTIzND…',
      '/u/MTIzND…',
      '/archive/MTIzND…',
      '/w/MTIzND…',
      '/t/o/MTIzND…',
      '/t/c/MTIzND…?utm=x',
      '/u/MTIzND…',
      '/lists/12?page=2',
    ])
    // Nowhere in the output, not only not in the url field: any part of the token past its first 6 characters.
    const all = sink.lines.join('\n')
    assert.equal(all.includes(TOKEN.slice(6, 20)), false)
    assert.equal(all.includes(t.account.key), false, 'nor the API key')
  })

  it('leaves short segments and unrelated look-alikes as they are', () => {
    assert.equal(loggablePath('/u/abc'), '/u/abc')
    assert.equal(loggablePath('/users/abcdefghijkl'), '/users/abcdefghijkl')
    assert.equal(loggablePath('/t/x/abcdefghijkl'), '/t/x/abcdefghijkl')
    assert.equal(loggablePath('/confirm/abcdefghijkl/x'), '/confirm/abcdef…/x')
    // Doubled slashes route as one, so they are read as one here too; a query keeps its own.
    assert.equal(loggablePath('//t//o/abcdefghijkl?u=http://x'), '/t/o/abcdef…?u=http://x')
    assert.equal(loggablePath('/confirm//abcdefghijkl'), '/confirm/abcdef…')
  })

  it('reads percent-escapes as the router does, and leaves out an API key given in the query', () => {
    // `/%75/<token>` is served as the unsubscribe page, `/t/%63/<token>` as a click.
    assert.equal(loggablePath('/%75/abcdefghijkl'), '/u/abcdef…')
    assert.equal(loggablePath('/t/%63/abcdefghijkl.0'), '/t/c/abcdef…')
    // A malformed escape elsewhere does not leave the rest undecoded; reserved characters stay encoded.
    assert.equal(loggablePath('/%75/abcdefghijkl/%E0%A4%A'), '/u/abcdef…/%E0%A4%A')
    assert.equal(loggablePath('/%E0%A4%A/abcdefghijkl'), '/%E0%A4%A/abcdefghijkl')
    assert.equal(loggablePath('/a%2Fb'), '/a%2Fb')
    assert.equal(loggablePath('/lists?k%65y=secret'), '/lists?key=…')
    assert.equal(loggablePath('/lists?key[]=secret'), '/lists?key[]=…')
    assert.equal(loggablePath('/lists?key=secret-key&page=2'), '/lists?key=…&page=2')
    assert.equal(loggablePath('/lists?page=2&API_KEY=secret'), '/lists?page=2&API_KEY=…')
    assert.equal(loggablePath('/lists?monkey=1'), '/lists?monkey=1')
  })
})

describe('log format', () => {
  const config = { ...loadConfig({}), logLevel: 'info' }

  it('writes JSON lines when the output is no terminal', () => {
    const sink = lineSink()
    createLogger(config, { tty: false, destination: sink.stream }).info({ n: 1 }, 'hello')
    assert.equal(sink.lines.length, 1)
    const line = JSON.parse(sink.lines[0]!) as Record<string, unknown>
    assert.equal(line.msg, 'hello')
    assert.equal(line.n, 1)
  })

  it('writes lines a person can read on a terminal', async () => {
    const sink = lineSink()
    createLogger(config, { tty: true, destination: sink.stream }).info({ n: 1 }, 'hello')
    // pino-pretty writes asynchronously: wait (bounded) for the line.
    for (let i = 0; i < 100 && sink.lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
    assert.ok(sink.lines.length >= 2, sink.lines.join('\n'))
    assert.match(sink.lines[0]!, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: hello$/)
    assert.match(sink.lines[1]!, /^\s+n: 1$/)
    assert.throws(() => JSON.parse(sink.lines[0]!))
  })
})
