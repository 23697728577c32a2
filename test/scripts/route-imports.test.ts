/** The check that routes take no repo function through a module's index.ts (scripts/route-imports.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { definingFile, routesReachingSql } from '../../scripts/route-imports.js'

const dir = '/m'
/** A reader over the given files, named relative to `dir`. */
const reader = (files: Record<string, string>) => (file: string) =>
  files[file.slice(dir.length + 1)] ?? undefined

/** What the check reports for `lists/lists.routes.ts` importing `line` beside the files of module `a`. */
function reported(line: string, a: Record<string, string>): string[] {
  const files = { 'lists/lists.routes.ts': `${line}\nexport const r = 1\n`, ...a }
  return routesReachingSql([`${dir}/lists/lists.routes.ts`], dir, reader(files))
}

const REPO = { 'a/a.repo.ts': 'export async function findA() { return 1 }\n' }

describe('route-imports: a route reaching SQL through an index', () => {
  it('reports a repo function the index re-exports', () => {
    assert.deepEqual(
      reported("import { findA } from '../a/index.js'", {
        'a/index.ts': "export { findA } from './a.repo.js'\n",
        ...REPO,
      }),
      ['lists/lists.routes.ts: findA (declared in a/a.repo.ts)'],
    )
  })

  it('follows export *, renames, and an export of an import', () => {
    const out = reported("import { renamed as mine } from '../a/index.js'", {
      'a/index.ts': "export * from './more.js'\n",
      'a/more.ts': "import { findA } from './a.repo.js'\nexport { findA as renamed }\n",
      ...REPO,
    })
    assert.deepEqual(out, ['lists/lists.routes.ts: mine (declared in a/a.repo.ts)'])
  })

  it('reports a table and a SQL fragment, passes a service and a type', () => {
    const a = {
      'a/index.ts': [
        "export { rows } from './a.table.js'",
        "export { cond } from './a.sql.js'",
        "export { serve } from './a.service.js'",
        "export type { Row } from './a.repo.js'",
      ].join('\n'),
      'a/a.table.ts': 'export const rows = {}\n',
      'a/a.sql.ts': 'export const cond = 1\n',
      'a/a.service.ts': 'export function serve() {}\n',
      'a/a.repo.ts': 'export interface Row { id: number }\n',
    }
    assert.deepEqual(reported("import { rows, cond, serve, type Row } from '../a/index.js'", a), [
      'lists/lists.routes.ts: rows (declared in a/a.table.ts)',
      'lists/lists.routes.ts: cond (declared in a/a.sql.ts)',
    ])
    assert.deepEqual(reported("import type { Row } from '../a/index.js'", a), [])
  })

  it('reports a namespace of a repo, re-exported or imported and exported', () => {
    const route = "import { byStar, byImport, serviceNs } from '../a/index.js'\n"
    const out = reported(route, {
      'a/index.ts': [
        "export * as byStar from './a.repo.js'",
        "import * as byImport from './a.repo.js'",
        "import * as serviceNs from './a.service.js'",
        'export { byImport, serviceNs }',
      ].join('\n'),
      'a/a.service.ts': 'export function serve() {}\n',
      ...REPO,
    })
    assert.deepEqual(out, [
      'lists/lists.routes.ts: byStar (declared in a/a.repo.ts)',
      'lists/lists.routes.ts: byImport (declared in a/a.repo.ts)',
    ])
  })

  it("reports the members a route reads off an index's namespace", () => {
    const out = reported(
      "import * as a from '../a/index.js'\nconst x = a.findA()\nconst y = a['findA']\na.serve()\n",
      {
        'a/index.ts': "export { findA } from './a.repo.js'\nexport { serve } from './a.service.js'\n",
        ...REPO,
        'a/a.service.ts': 'export function serve() {}\n',
      },
    )
    assert.deepEqual(out, ['lists/lists.routes.ts: a.findA (declared in a/a.repo.ts)'])
  })

  it('ends on an export cycle and a name no file declares', () => {
    const read = reader({
      'a/index.ts': "export * from './b.js'\n",
      'a/b.ts': "export * from './index.js'\n",
    })
    assert.equal(definingFile(`${dir}/a/index.ts`, 'nothing', read), undefined)
  })
})
