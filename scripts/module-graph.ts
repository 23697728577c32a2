/**
 * The module graph of src/modules and what is wrong with it: cycles (strongly connected components) and, inside
 * each, the imports that run upward. Pure functions over an in-memory graph; scripts/check-module-graph.ts reads
 * the files and decides what fails.
 */

/** One module importing another: `from → to`, with the files that do it (for the report). */
export interface Edge {
  from: string
  to: string
  files: string[]
}

export type Graph = Map<string, Map<string, Edge>>

export function addImport(graph: Graph, from: string, to: string, file: string): void {
  if (from === to) return
  let out = graph.get(from)
  if (!out) graph.set(from, (out = new Map()))
  if (!graph.has(to)) graph.set(to, new Map())
  const edge = out.get(to)
  if (edge) {
    if (!edge.files.includes(file)) edge.files.push(file)
  } else out.set(to, { from, to, files: [file] })
}

export const edgeKey = (e: { from: string; to: string }): string => `${e.from} -> ${e.to}`

/** Tarjan's strongly connected components with more than one module, each sorted, in a stable order. */
export function findCycles(graph: Graph): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  // Recursive: the graph has a few dozen modules, far below any stack limit.
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const scc: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      scc.push(w)
    } while (w !== v)
    if (scc.length > 1) out.push(scc.sort())
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

/** The edges between modules of one cycle: each lies on a cycle, since its target reaches its source. */
export function cycleEdges(graph: Graph, scc: readonly string[]): Edge[] {
  const members = new Set(scc)
  return scc
    .flatMap((m) => [...(graph.get(m)?.values() ?? [])])
    .filter((e) => members.has(e.to))
    .sort((a, b) => edgeKey(a).localeCompare(edgeKey(b)))
}

/** The shortest path `from → … → to` inside `members` (breadth first), for a readable cycle. */
export function shortestPath(graph: Graph, from: string, to: string, members: ReadonlySet<string>): string[] {
  const prev = new Map<string, string>([[from, from]])
  const queue = [from]
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!
    if (v === to) break
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!members.has(w) || prev.has(w)) continue
      prev.set(w, v)
      queue.push(w)
    }
  }
  if (!prev.has(to)) return []
  const path = [to]
  while (path[0] !== from) path.unshift(prev.get(path[0]!)!)
  return path
}

/** The cycle an edge closes, e.g. `a → b → c → a`. */
export function cycleThrough(graph: Graph, edge: Edge, scc: readonly string[]): string[] {
  return [edge.from, ...shortestPath(graph, edge.to, edge.from, new Set(scc))]
}

/**
 * An order of the modules of one cycle, lowest first, that leaves the fewest importing files pointing upward
 * (a minimum feedback arc set, weighted by files): exact for up to 8 modules, by insertion beyond.
 * The upward edges are the imports to turn around (move the shared part down, the orchestration up).
 */
export function layerOrder(graph: Graph, scc: readonly string[]): { order: string[]; upward: Edge[] } {
  const edges = cycleEdges(graph, scc)
  const cost = (order: readonly string[]): number => {
    const rank = new Map(order.map((m, i) => [m, i]))
    // An import is upward when the importer sits lower than what it imports (modules not yet placed: no cost).
    const up = (e: Edge) => (rank.get(e.from) ?? -1) < (rank.get(e.to) ?? -1) && rank.has(e.from)
    return edges.reduce((sum, e) => sum + (up(e) ? e.files.length : 0), 0)
  }
  let best: string[] = [...scc].sort()
  let bestCost = cost(best)
  if (scc.length <= 8) {
    for (const order of permutations([...scc].sort())) {
      const c = cost(order)
      if (c < bestCost) [best, bestCost] = [order, c]
    }
  } else {
    // Insert each module where it costs least; good enough to read, the check itself does not depend on it.
    best = []
    for (const m of [...scc].sort()) {
      let place = 0
      let placeCost = Infinity
      for (let i = 0; i <= best.length; i++) {
        const c = cost([...best.slice(0, i), m, ...best.slice(i)])
        if (c < placeCost) [place, placeCost] = [i, c]
      }
      best.splice(place, 0, m)
    }
  }
  const rank = new Map(best.map((m, i) => [m, i]))
  return { order: best, upward: edges.filter((e) => rank.get(e.from)! < rank.get(e.to)!) }
}

function* permutations(items: string[]): Generator<string[]> {
  if (items.length <= 1) {
    yield items
    return
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)]
    for (const p of permutations(rest)) yield [items[i]!, ...p]
  }
}

/**
 * The imports that run upward through declared layers (lowest first): from a module to one of a higher layer.
 * Imports within a layer are allowed (the cycle check keeps them acyclic); a module in no layer is not judged.
 */
export function upwardImports(graph: Graph, layers: readonly (readonly string[])[]): Edge[] {
  const rank = new Map<string, number>()
  layers.forEach((layer, i) => layer.forEach((m) => rank.set(m, i)))
  return [...graph.values()]
    .flatMap((out) => [...out.values()])
    .filter((e) => rank.has(e.from) && rank.has(e.to) && rank.get(e.from)! < rank.get(e.to)!)
    .sort((a, b) => edgeKey(a).localeCompare(edgeKey(b)))
}

/**
 * The files reachable from `start` through `importsOf` (depth first), each with the chain that reaches it:
 * e.g. whether a module's index.ts pulls in a routes file, and through which imports.
 */
export function reachable(
  start: string,
  importsOf: (file: string) => readonly string[],
): Map<string, string[]> {
  const chains = new Map<string, string[]>([[start, [start]]])
  const stack = [start]
  // Bounded: each file is entered once.
  while (stack.length > 0) {
    const file = stack.pop()!
    for (const next of importsOf(file)) {
      if (chains.has(next)) continue
      chains.set(next, [...chains.get(file)!, next])
      stack.push(next)
    }
  }
  return chains
}
