import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { after } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/core/config.js'
import { createContext, type AppContext } from '../../src/core/context.js'
import type { Clock } from '../../src/core/clock.js'
import type { Plan } from '../../src/core/http/auth.js'
import { createAccountService, jobQueues } from '../../src/modules/index.js'
import { startWorker } from '../../src/worker.js'
import { createTestDatabase, type TestDatabase } from './databases.js'

export interface TestAppOptions {
  config?: Partial<Config>
  clock?: Clock
  /** Run the job workers in this process (default true). */
  worker?: boolean
  /** Also listen on 127.0.0.1 (random port) for tests that need a real socket. */
  listen?: boolean
  /** A logger of the test's own (to read what is logged); default one at TEST_LOG_LEVEL, else silent. */
  log?: Logger
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON bodies
export interface TestResponse<T = any> {
  status: number
  body: T
  text: string
  headers: Record<string, string | string[] | undefined>
}

export interface RequestOptions {
  body?: unknown
  /** API key to send; null sends none; default the test account's key. */
  key?: string | null
  headers?: Record<string, string>
}

export interface TestAccount {
  id: number
  key: string
}

export interface TestApp {
  app: FastifyInstance
  ctx: AppContext
  db: TestDatabase
  account: TestAccount
  /** Base URL when started with listen: true. */
  url: string
  dataDir: string
  req<T = any>(method: string, url: string, opts?: RequestOptions): Promise<TestResponse<T>> // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON bodies
  createAccount(plan?: Plan): Promise<TestAccount>
  close(): Promise<void>
}

/** A fresh database, context and Fastify app; closed automatically after the test file. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-test-'))
  const config: Config = {
    ...loadConfig({}),
    dataDir,
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://127.0.0.1:3000',
    rateLimitPerMinute: 0,
    authFailuresPerMinute: 0,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...opts.config,
  }
  const ctx = await createContext(config, {
    dbHandle: db.handle,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  })
  await ctx.jobs.start(jobQueues)
  if (opts.worker !== false) await startWorker(ctx)
  const app = await buildApp(ctx)
  let url = ''
  if (opts.listen) url = await app.listen({ port: 0, host: '127.0.0.1' })
  else await app.ready()
  const accounts = createAccountService(ctx)
  const createAccount = async (plan: Plan = 'marketer'): Promise<TestAccount> => {
    const created = await accounts.createAccount(`Test ${plan}`, plan)
    return { id: created.account_id, key: created.api_key }
  }
  const account = await createAccount('marketer')
  let closed = false
  const testApp: TestApp = {
    app,
    ctx,
    db,
    account,
    url,
    dataDir,
    createAccount,
    async req(method, reqUrl, ro = {}) {
      const headers: Record<string, string> = { ...ro.headers }
      const key = ro.key === undefined ? account.key : ro.key
      if (key !== null) headers.key = key
      let payload: string | undefined
      if (ro.body !== undefined) {
        payload = typeof ro.body === 'string' ? ro.body : JSON.stringify(ro.body)
        headers['content-type'] ??= 'application/json'
      }
      const res = await app.inject({ method: method as 'GET', url: reqUrl, headers, payload })
      let body: unknown = res.body
      try {
        body = res.body ? JSON.parse(res.body) : undefined
      } catch {
        // not JSON: keep the text
      }
      return { status: res.statusCode, body, text: res.body, headers: res.headers } as TestResponse
    },
    async close() {
      if (closed) return
      closed = true
      await app.close()
      await ctx.close()
      await db.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
  after(() => testApp.close())
  return testApp
}
