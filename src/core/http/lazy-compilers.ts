import AjvCompiler from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import { withFiniteNumbers } from './finite-numbers.js'

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type ValidatorFactory = NonNullable<Factories['buildValidator']>
type SerializerFactory = NonNullable<Factories['buildSerializer']>

/** A compiled validator as Fastify calls it: false when invalid, with the reasons in `errors`. */
interface Validate {
  (data: unknown): unknown
  errors?: unknown
}

/**
 * Fastify's own compilers (Ajv with the app's options, fast-json-stringify), each route's schema compiled the
 * first time the route validates or answers with it instead of at start-up. There are some 120 routes with
 * several response schemas each: compiling them all was 0.7 of the 1.3 s a start spent building the app on a
 * slow 2-core machine (profiled), paid again by every test file, while a test file or a process calls a few
 * routes. The compiled function is kept, so only a route's first request pays (a few milliseconds).
 */
/**
 * Compilations not yet done, so that a test can do them all (compileAllSchemas): a schema that does not compile
 * would otherwise surface only at its route's first request, where it used to stop the start. Held weakly: a
 * test file builds several apps in one process, and an app closed and dropped takes its routes' compilers (each
 * route's closure holds the app's Ajv) with it.
 */
const pending = new Set<WeakRef<() => void>>()

/** Remembers a compilation until it is done; returns what it calls, once done, to be forgotten. */
function remember(compileNow: () => void): () => void {
  const ref = new WeakRef(compileNow)
  pending.add(ref)
  return () => pending.delete(ref)
}

/** Compiles every route schema not compiled yet, of the apps still alive; returns how many there were. */
export function compileAllSchemas(): number {
  const all = [...pending].flatMap((ref) => ref.deref() ?? [])
  pending.clear()
  for (const compileNow of all) compileNow()
  return all.length
}

export const lazyCompilers: Factories = {
  buildValidator: ((externalSchemas, options) => {
    const compile = AjvCompiler()(externalSchemas, options)
    return (route) => {
      let compiled: Validate | undefined
      const compileNow = () => {
        forget()
        // Every number and integer schema refuses ±Infinity, which Ajv's coercion lets through (finite-numbers.ts).
        return (compiled ??= compile({ ...route, schema: withFiniteNumbers(route.schema) }) as Validate)
      }
      const forget = remember(compileNow)
      const validate: Validate = (data) => {
        compiled ??= compileNow()
        const ok = compiled(data)
        // Fastify reads the reasons from the function it was given.
        validate.errors = compiled.errors
        return ok
      }
      return validate
    }
  }) as ValidatorFactory,
  buildSerializer: ((externalSchemas, options) => {
    const compile = SerializerSelector()(externalSchemas, options)
    return (route) => {
      let compiled: ((doc: unknown) => string) | undefined
      const compileNow = () => {
        forget()
        return (compiled ??= compile(route))
      }
      const forget = remember(compileNow)
      return (doc: unknown) => (compiled ?? compileNow())(doc)
    }
  }) as SerializerFactory,
}
