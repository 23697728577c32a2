/**
 * `npm run lint` runs this: the import graph between the modules of src/modules (non-test files), its cycles and
 * the imports in them that run upward. It fails when an import between two modules lies on a cycle and is not in
 * KNOWN_CYCLE_IMPORTS (a new cycle, or a new edge into an old one), and when a listed import no longer lies on
 * one (so the list only shrinks). design.md: "The module graph has no cycle"; issue 11 item 3 empties the list.
 *
 * Usage: node --import tsx scripts/check-module-graph.ts [--quiet]
 */
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import {
  addImport,
  cycleEdges,
  cycleThrough,
  edgeKey,
  findCycles,
  layerOrder,
  type Graph,
} from './module-graph.js'

/**
 * The imports that lie on a cycle today (module → module), each to be turned around by issue 11 item 3: the
 * shared part moves down into core/, the orchestration up into a module above both. Remove a line once its
 * import is gone or no longer closes a cycle; never add one.
 */
const KNOWN_CYCLE_IMPORTS: readonly string[] = []

const root = path.resolve(import.meta.dirname, '..')
const modulesDir = path.join(root, 'src', 'modules')

/** Test code may reach anywhere; only what ships counts. */
const isTestFile = (file: string): boolean => /\.test(-helpers)?\.ts$|\.test\.[^/]*\.ts$/.test(file)

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...sourceFiles(p))
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !isTestFile(e.name)) out.push(p)
  }
  return out
}

/** `campaigns` for src/modules/campaigns/…; `(modules root)` for src/modules/index.ts; null outside. */
function moduleOf(file: string): string | null {
  const rel = path.relative(modulesDir, file)
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null
  const parts = rel.split(path.sep)
  return parts.length > 1 ? parts[0]! : parts[0] === 'index.ts' ? '(modules root)' : null
}

/** The module graph of src/modules from the import and export-from statements (type-only ones included). */
export function readModuleGraph(): { graph: Graph; files: number } {
  const graph: Graph = new Map()
  const files = sourceFiles(modulesDir).filter((f) => path.dirname(f) !== modulesDir)
  for (const file of files) {
    const from = moduleOf(file)!
    if (!graph.has(from)) graph.set(from, new Map())
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue
      const to = moduleOf(path.resolve(path.dirname(file), ref.fileName).replace(/\.js$/, '.ts'))
      if (to) addImport(graph, from, to, path.relative(modulesDir, file))
    }
  }
  return { graph, files: files.length }
}

function main(): number {
  const quiet = process.argv.includes('--quiet')
  const { graph, files } = readModuleGraph()
  const known = new Set(KNOWN_CYCLE_IMPORTS)
  const edgeCount = [...graph.values()].reduce((n, out) => n + out.size, 0)
  const cycles = findCycles(graph)
  const lines: string[] = [
    `Module graph: ${graph.size} modules, ${edgeCount} imports between them (${files} non-test files of src/modules).`,
  ]
  const onCycle = new Set<string>()
  const added: string[] = []
  if (cycles.length === 0) lines.push('No cycle.')
  cycles.forEach((scc, i) => {
    const { order, upward } = layerOrder(graph, scc)
    lines.push(
      '',
      `Cycle ${i + 1} of ${cycles.length}: ${scc.length} modules import each other: ${scc.join(', ')}`,
      `  Layers, lowest first, with the fewest upward imports: ${order.join(' < ')}`,
      `  Upward imports (${upward.length}), the ones to turn around:`,
      ...upward.map((e) => `    ${edgeKey(e).padEnd(34)} ${e.files.join(', ')}`),
      '  Every import on the cycle, with the shortest cycle it closes:',
    )
    for (const e of cycleEdges(graph, scc)) {
      const key = edgeKey(e)
      onCycle.add(key)
      const isNew = !known.has(key)
      if (isNew) added.push(key)
      const cycle = `  ${isNew ? 'NEW' : '   '} ${cycleThrough(graph, e, scc).join(' → ')}`
      const files = e.files.length > 3 ? [...e.files.slice(0, 3), `${e.files.length - 3} more`] : e.files
      // The importing files beside a short cycle, under a long one.
      if (cycle.length < 52) lines.push(`${cycle.padEnd(52)} ${files.join(', ')}`)
      else lines.push(cycle, `${' '.repeat(52)} ${files.join(', ')}`)
    }
  })
  const stale = [...known].filter((k) => !onCycle.has(k))
  if (!quiet || added.length > 0 || stale.length > 0) console.log(lines.join('\n'))
  let failed = false
  if (added.length > 0) {
    failed = true
    console.error(
      `\nFAIL: ${added.length} import(s) between modules close a cycle and are not in KNOWN_CYCLE_IMPORTS ` +
        `(scripts/check-module-graph.ts). Move the shared part down (core/) or the orchestration up instead:\n` +
        added.map((k) => `  ${k}`).join('\n'),
    )
  }
  if (stale.length > 0) {
    failed = true
    console.error(
      `\nFAIL: no longer on a cycle, remove from KNOWN_CYCLE_IMPORTS (scripts/check-module-graph.ts):\n` +
        stale.map((k) => `  ${k}`).join('\n'),
    )
  }
  return failed ? 1 : 0
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main()
