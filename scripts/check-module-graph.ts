/**
 * `npm run lint` runs this: the import graph between the modules of src/modules (non-test files), its cycles and
 * the imports in them that run upward. It fails on any cycle (design.md: "The module graph has no cycle"), on any
 * import up the LAYERS below, and when a module's index.ts (its public API) reaches a `*.routes.ts` or
 * `*.module.ts` file through its imports: only src/modules/index.ts registers routes.
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
  reachable,
  upwardImports,
  type Graph,
} from './module-graph.js'
import { routesReachingSql } from './route-imports.js'

/**
 * The layers of the modules, lowest first (design.md, Layout). A module imports modules of its own layer or
 * below, never above; within a layer the cycle check keeps imports one way. The rule the layers draw: whatever
 * records what happened to mail (outcomes) sits above everything it writes to (the send ledger, the event log
 * and its counters, contacts, the webhook outbox), and whatever mail arrives from or leaves through (tracking
 * pages, bounces, the senders) above that. A module in no layer is checked for cycles only, and named in the
 * output so that someone places it.
 */
const LAYERS: readonly (readonly string[])[] = [
  // Accounts, and what needs no other module.
  ['accounts', 'signals', 'idempotency', 'system'],
  // What mail is made from and sent to, and the send ledger; the product catalogue and what it recommends.
  ['lists', 'templates', 'domains', 'coupons', 'transactions', 'messages', 'feeds', 'recommenders'],
  // Built on those: segments of lists, the event log (and counters) of the ledger's messages, the one sender of
  // every kind of mail (its outcome recorders are handed in from the module list), double opt-in.
  ['segments', 'events', 'delivery', 'confirmation'],
  // Contacts (their erasure reaches the event log) and the webhook outbox of events; automations as a resource.
  ['subscribers', 'webhooks', 'pipelines'],
  // Reading contacts; recording outcomes into the ledger, log, counters, contacts and outbox.
  ['search', 'tracker-events', 'outcomes'],
  // Where outcomes arrive and mail leaves, each on the ones before.
  ['tracking'],
  ['transactional'],
  ['bounces', 'campaigns', 'automations'],
]

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

/** The relative imports of a source file, resolved to .ts paths (type-only ones included). */
function importsOf(file: string): string[] {
  if (!fs.existsSync(file)) return []
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
  return info.importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.resolve(path.dirname(file), name).replace(/\.js$/, '.ts'))
}

/** Each module's index.ts that reaches a routes or module-definition file, with the chain of imports. */
function indexesReachingRoutes(): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(modulesDir, { withFileTypes: true })) {
    const index = path.join(modulesDir, e.name, 'index.ts')
    if (!e.isDirectory() || !fs.existsSync(index)) continue
    for (const [file, chain] of reachable(index, importsOf)) {
      if (!/\.(routes|module)\.ts$/.test(file)) continue
      out.push(chain.map((f) => path.relative(modulesDir, f)).join(' → '))
      break
    }
  }
  return out
}

function main(): number {
  const quiet = process.argv.includes('--quiet')
  const { graph, files } = readModuleGraph()
  const edgeCount = [...graph.values()].reduce((n, out) => n + out.size, 0)
  const cycles = findCycles(graph)
  const lines: string[] = [
    `Module graph: ${graph.size} modules, ${edgeCount} imports between them (${files} non-test files of src/modules).`,
  ]
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
      const cycle = `    ${cycleThrough(graph, e, scc).join(' → ')}`
      const files = e.files.length > 3 ? [...e.files.slice(0, 3), `${e.files.length - 3} more`] : e.files
      // The importing files beside a short cycle, under a long one.
      if (cycle.length < 52) lines.push(`${cycle.padEnd(52)} ${files.join(', ')}`)
      else lines.push(cycle, `${' '.repeat(52)} ${files.join(', ')}`)
    }
  })
  const layered = new Set(LAYERS.flat())
  const unplaced = [...graph.keys()].filter((m) => m !== '(modules root)' && !layered.has(m)).sort()
  if (unplaced.length > 0) lines.push(`In no layer (checked for cycles only): ${unplaced.join(', ')}`)
  const upward = upwardImports(graph, LAYERS)
  const routed = indexesReachingRoutes()
  const routesFiles = sourceFiles(modulesDir).filter((f) => f.endsWith('.routes.ts'))
  const readSource = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : undefined)
  const sqlInRoutes = routesReachingSql(routesFiles, modulesDir, readSource)
  const failed = cycles.length > 0 || upward.length > 0 || routed.length > 0 || sqlInRoutes.length > 0
  if (!quiet || failed) console.log(lines.join('\n'))
  if (cycles.length > 0) {
    console.error(
      `\nFAIL: ${cycles.length} cycle(s) between modules. Move the shared part down (core/) or the ` +
        `orchestration up (a module above both) instead.`,
    )
  }
  if (upward.length > 0) {
    console.error(
      `\nFAIL: import(s) up the LAYERS of scripts/check-module-graph.ts:\n` +
        upward.map((e) => `  ${edgeKey(e).padEnd(34)} ${e.files.join(', ')}`).join('\n'),
    )
  }
  if (routed.length > 0) {
    console.error(
      `\nFAIL: a module's index.ts (its public API) pulls in routes; registration belongs in ` +
        `<group>.module.ts, which only src/modules/index.ts imports:\n` +
        routed.map((c) => `  ${c}`).join('\n'),
    )
  }
  if (sqlInRoutes.length > 0) {
    console.error(
      `\nFAIL: a route calls what a repo, table or SQL fragment declares, through a module's index.ts ` +
        `(routes call a service, design.md):\n` +
        sqlInRoutes.map((c) => `  ${c}`).join('\n'),
    )
  }
  return failed ? 1 : 0
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main()
