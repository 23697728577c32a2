import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import rateLimit from '@fastify/rate-limit'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from './core/context.js'
import type { ApiApp } from './core/http/app-types.js'
import { keyAuth } from './core/http/auth.js'
import { AuthFailureLimiter } from './core/http/auth-failures.js'
import { errorHandler } from './core/http/error-handler.js'
import { finiteNumbers } from './core/http/finite-numbers.js'
import { FORM_TYPE, formBodyParser } from './core/http/form-body.js'
import { HttpError } from './core/http/errors.js'
import { jsonBodyParser } from './core/http/json-body.js'
import { loggablePath } from './core/http/log-path.js'
import { rejectNulCharacters } from './core/http/nul-characters.js'
import { requireDecimalPathIds } from './core/http/path-ids.js'
import { lazyCompilers } from './core/http/lazy-compilers.js'
import { sha256Hex } from './core/ids.js'
import { modules, createAccountService, registerIdempotency } from './modules/index.js'

const JSON_TYPE = 'application/json'

/** Builds the HTTP application: wire rules of contract §1 here, every route from the modules. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log,
    // Access lines are written at debug level by the onResponse hook below; two info lines per request cost throughput.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.bodyLimitBytes,
    // Fastify's default of 10 s per plugin fails the start on a starved CPU (seen with @fastify/swagger-ui).
    pluginTimeout: 120_000,
    // `/lists/1/` and `//lists/1` route as `/lists/1`: clients join a base URL ending in a slash to a path
    // starting with one (a Python extractor of Ecomail's data does), which the web server in front of Ecomail
    // forgives.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
    // allowUnionTypes: a type list (`type: ['number', 'string', 'null']`, purchase amounts) is valid JSON Schema;
    // without it Ajv's strict mode logs a warning for each such schema at every start.
    schemaController: { compilersFactory: lazyCompilers },
    ajv: {
      customOptions: {
        allErrors: true,
        coerceTypes: 'array',
        removeAdditional: false,
        allowUnionTypes: true,
      },
      plugins: [finiteNumbers],
    },
    // Bad percent-encoding (400) and over-long path parameters (414) fail before routing, where no hook runs and
    // Fastify would answer in its own shape: write `{message}` here, as a Buffer so no charset is appended.
    frameworkErrors: (err, _req, reply) => {
      const status = err.statusCode ?? 400
      const message = status >= 500 ? 'Internal Server Error' : err.message
      void (reply as FastifyReply)
        .code(status)
        .header('content-type', JSON_TYPE)
        .send(Buffer.from(JSON.stringify({ message })))
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as ApiApp

  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ message: 'Not Found' }))
  app.addHook('onResponse', async (req, reply) => {
    // The line's fields are built only when it is written: loggablePath's scans ran on every response.
    if (!ctx.log.isLevelEnabled('debug')) return
    req.log.debug(
      { method: req.method, url: loggablePath(req.url), status: reply.statusCode, ms: reply.elapsedTime },
      'request',
    )
  })

  // JSON with or without charset, on any method (DELETE included); an empty body is no body.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser)

  rejectNulCharacters(app)
  requireDecimalPathIds(app)

  // Exactly `application/json`: one PHP client decodes error bodies only then.
  app.addHook('onSend', async (_req, reply, payload) => {
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type.startsWith(JSON_TYPE)) reply.header('content-type', JSON_TYPE)
    return payload
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tidings API',
        version: '2.0',
        description: 'Ecomail v2 compatible email-marketing API',
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'key' } } },
      security: [{ key: [] }],
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  // Hidden from the document it serves (not part of the API a client is generated for), yet named all the same.
  app.get('/openapi.json', { schema: { hide: true, operationId: 'getOpenApiDocument' } }, async () =>
    app.swagger(),
  )

  for (const m of modules) {
    if (m.publicRoutes) await app.register(async (scope) => m.publicRoutes!(scope as ApiApp, ctx))
  }

  await app.register(async (api) => {
    const scope = api as ApiApp
    // PHP's http_build_query bodies, read as their JSON would be. In this scope only: its key is checked before a
    // body is parsed, and the tracking pages read their one-click form their own way.
    scope.addContentTypeParser(FORM_TYPE, { parseAs: 'string' }, formBodyParser)
    // So the OpenAPI document says so: every route of this scope that takes a body takes it in either type.
    scope.addHook('onRoute', (route) => {
      if (route.schema?.body && !route.schema.consumes) route.schema.consumes = [JSON_TYPE, FORM_TYPE]
    })
    const limit = ctx.config.rateLimitPerMinute
    if (limit > 0) {
      await scope.register(rateLimit, {
        max: limit,
        timeWindow: 60_000,
        enableDraftSpec: true,
        keyGenerator: (req) => {
          const key = req.headers.key
          return typeof key === 'string' && key ? `k:${sha256Hex(key)}` : `ip:${req.ip}`
        },
        errorResponseBuilder: (_req, c) =>
          new HttpError(429, { message: `Too Many Attempts. Retry in ${Math.ceil(c.ttl / 1000)} seconds.` }),
      })
      // The combined IETF fields of draft-ietf-httpapi-ratelimit-headers-07 (as express-rate-limit's "draft-7"),
      // beside the plugin's own separate ones.
      scope.addHook('onSend', async (_req, reply, payload) => {
        // Already set: the failed-authentication limit answered (core/http/auth.ts), with its own figures.
        if (reply.hasHeader('ratelimit')) return payload
        const remaining = reply.getHeader('ratelimit-remaining')
        const reset = reply.getHeader('ratelimit-reset')
        if (remaining !== undefined) {
          reply.header('RateLimit-Policy', `${limit};w=60`)
          reply.header(
            'RateLimit',
            `limit=${limit}, remaining=${String(remaining)}, reset=${String(reset ?? 60)}`,
          )
        }
        return payload
      })
    }
    const failures = ctx.config.authFailuresPerMinute
    scope.addHook(
      'onRequest',
      keyAuth(
        createAccountService(ctx).resolveKey,
        failures > 0 ? new AuthFailureLimiter(failures) : undefined,
      ),
    )
    registerIdempotency(scope, ctx)
    for (const m of modules)
      if (m.apiRoutes) await scope.register(async (s) => m.apiRoutes!(s as ApiApp, ctx))
  })

  return app as unknown as FastifyInstance
}
