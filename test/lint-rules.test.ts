import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { ESLint } from 'eslint'

/**
 * The layout rules of eslint.config.js (design.md), each shown a file that breaks it and a file that keeps it:
 * a rule whose pattern a refactoring of the config loosened (a path spelled `./../`, a `.ts` extension, an
 * `import()`) would otherwise pass every violation in silence while `npm run lint` stays green.
 */
const root = path.resolve(import.meta.dirname, '..')
const eslint = new ESLint({ cwd: root })

/** The rules a text breaks, as ESLint would report them for a file at `file` (which need not exist). */
async function brokenRules(file: string, ...lines: string[]): Promise<string[]> {
  const [result] = await eslint.lintText(`${lines.join('\n')}\n`, { filePath: path.join(root, file) })
  return [...new Set(result!.messages.filter((m) => m.severity === 2).map((m) => m.ruleId ?? m.message))]
}

const IMPORTS = 'no-restricted-imports'
const SYNTAX = 'no-restricted-syntax'
const SQL_IMPORTS = '@typescript-eslint/no-restricted-imports'
const DESCRIPTION = '@eslint-community/eslint-comments/require-description'

const cases: { name: string; file: string; code: string[]; broken: string[] }[] = [
  {
    name: 'core imports a module',
    file: 'src/core/x.ts',
    code: ["export { a } from '../modules/accounts/index.js'"],
    broken: [IMPORTS],
  },
  {
    name: 'core imports a module by another spelling',
    file: 'src/core/db/x.ts',
    code: ["export { a } from './../../modules/accounts/index.ts'"],
    broken: [IMPORTS],
  },
  {
    name: 'core imports a module later',
    file: 'src/core/x.ts',
    code: ["export const m = () => import('../modules/accounts/index.js')"],
    broken: [SYNTAX],
  },
  {
    name: 'a module reaches into another',
    file: 'src/modules/lists/x.ts',
    code: ["export { a } from './../accounts/accounts.repo.js'"],
    broken: [IMPORTS],
  },
  {
    name: 'a module imports another by its index',
    file: 'src/modules/lists/x.ts',
    code: ["export { a } from '../accounts/index.js'"],
    broken: [],
  },
  {
    name: "a module's file imports its registration",
    file: 'src/modules/lists/x.ts',
    code: ["export { a } from './lists.module.ts'"],
    broken: [IMPORTS],
  },
  {
    name: 'a module imports the module list',
    file: 'src/modules/lists/x.ts',
    code: ["export { a } from './../index.ts'"],
    broken: [IMPORTS],
  },
  {
    name: 'a module imports another through src/modules',
    file: 'src/modules/lists/x.ts',
    code: ["export { a } from './../../modules/accounts/index.js'"],
    broken: [IMPORTS],
  },
  {
    name: 'a table names another module’s table (a foreign key)',
    file: 'src/modules/lists/x.table.ts',
    code: ["export { contacts } from '../subscribers/subscribers.table.js'"],
    broken: [],
  },
  {
    name: 'a route imports a repo',
    file: 'src/modules/lists/x.routes.ts',
    code: ["export { a } from './lists.repo.ts'"],
    broken: [IMPORTS],
  },
  {
    name: 'a route reaches the database through its context',
    file: 'src/modules/lists/x.routes.ts',
    code: ['export const f = (ctx: { db: unknown }) => ctx.db'],
    broken: [SYNTAX],
  },
  {
    name: 'a route takes the database out of its context',
    file: 'src/modules/lists/x.routes.ts',
    code: ['export const f = ({ db }: { db: unknown }) => db'],
    broken: [SYNTAX],
  },
  {
    name: 'a service writes SQL',
    file: 'src/modules/lists/x.service.ts',
    code: ["import { sql } from 'drizzle-orm'", 'export const q = sql`SELECT 1`'],
    broken: [SQL_IMPORTS],
  },
  {
    name: "a service runs core's query helpers",
    file: 'src/modules/lists/x.service.ts',
    code: ["export { queryOne } from '../../core/db/sql.js'"],
    broken: [SQL_IMPORTS],
  },
  {
    name: 'a service names a query type',
    file: 'src/modules/lists/x.service.ts',
    code: ["import type { SQL } from 'drizzle-orm'", 'export type Q = SQL'],
    broken: [],
  },
  {
    name: "a service imports a driver's subpath",
    file: 'src/modules/lists/x.service.ts',
    code: ["export { Client } from 'pg/lib/index.js'"],
    broken: [SQL_IMPORTS],
  },
  {
    name: 'a service builds a query on the database of its context',
    file: 'src/modules/lists/x.service.ts',
    code: ['export const f = (ctx: { db: { select(): unknown } }) => ctx.db.select()'],
    broken: [SYNTAX],
  },
  {
    name: 'a service runs a statement in its transaction',
    file: 'src/modules/lists/x.service.ts',
    code: ["export const f = (tx: { execute(q: string): unknown }) => tx.execute('SELECT 1')"],
    broken: [SYNTAX],
  },
  {
    name: 'a service queries through the relational API',
    file: 'src/modules/lists/x.service.ts',
    code: [
      'export const f = (db: { query: { lists: { findMany(): unknown } } }) => db.query.lists.findMany()',
    ],
    broken: [SYNTAX],
  },
  {
    name: 'a service begins a transaction and hands it to a repo',
    file: 'src/modules/lists/x.service.ts',
    code: [
      'type Tx = { id: number }',
      'declare const repo: (tx: Tx) => Promise<number>',
      'export const f = (ctx: { db: { transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> } }) =>',
      '  ctx.db.transaction((tx) => repo(tx))',
    ],
    broken: [],
  },
  {
    name: 'a repo writes SQL',
    file: 'src/modules/lists/x.repo.ts',
    code: ["import { sql } from 'drizzle-orm'", 'export const q = sql`SELECT 1`'],
    broken: [],
  },
  {
    name: 'an any turned off without a reason',
    file: 'src/modules/lists/x.ts',
    code: ['// eslint-disable-next-line @typescript-eslint/no-explicit-any', 'export const a: any = 1'],
    broken: [DESCRIPTION],
  },
  {
    name: 'an any turned off with a reason',
    file: 'src/modules/lists/x.ts',
    code: [
      '// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a value of any shape',
      'export const a: any = 1',
    ],
    broken: [],
  },
]

describe('lint: the layout rules hold whichever way a file is written', () => {
  for (const c of cases) {
    it(`${c.broken.length ? 'fails' : 'passes'}: ${c.name}`, async () => {
      assert.deepEqual(await brokenRules(c.file, ...c.code), c.broken)
    })
  }
})
