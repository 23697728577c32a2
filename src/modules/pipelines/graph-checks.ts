import type { FieldErrorBag } from '../../core/http/errors.js'
import type { PipelineNode } from './pipeline-graph.js'
import { isWaitingNode } from './node-properties.js'

/** One arrow of the graph with the wire path of the id that draws it (`actions.2.next.yes.0`). */
interface Edge {
  to: string
  path: string
}

/** Every arrow out of node `i`, in the order `next` writes them. Ids are known to exist. */
function edgesOf(node: PipelineNode, i: number): Edge[] {
  const next = node.next
  if (!next) return []
  if (Array.isArray(next)) return next.map((to, j) => ({ to, path: `actions.${i}.next.${j}` }))
  return Object.entries(next).flatMap(([port, ids]) =>
    ids.map((to, j) => ({ to, path: `actions.${i}.next.${port}.${j}` })),
  )
}

/**
 * Nodes no run can arrive at: not on a path from `start`. Goal nodes count as entered (a run that meets a
 * goal's condition jumps there from anywhere), and so does what follows them.
 */
export function checkReachable(bag: FieldErrorBag, nodes: PipelineNode[], start: string): void {
  const index = new Map(nodes.map((n, i) => [n.id, i]))
  const seen = new Set<string>()
  const queue = [start, ...nodes.filter((n) => n.type === 'goal').map((n) => n.id)]
  while (queue.length > 0) {
    const id = queue.pop()!
    if (seen.has(id)) continue
    seen.add(id)
    const i = index.get(id)!
    for (const e of edgesOf(nodes[i]!, i)) if (!seen.has(e.to)) queue.push(e.to)
  }
  nodes.forEach((n, i) => {
    if (!seen.has(n.id)) bag.add(`actions.${i}`, `The node ${n.id} cannot be reached from the start.`)
  })
}

/**
 * A cycle on which no node waits (a wait, or a goal with a timeout) would run a subscriber round it without
 * end in one go. Such a cycle exists exactly when the graph without its waiting nodes has one; the arrow that
 * closes it is reported.
 */
export function checkCycles(bag: FieldErrorBag, nodes: PipelineNode[]): void {
  const index = new Map(nodes.map((n, i) => [n.id, i]))
  const waits = (i: number) => isWaitingNode(nodes[i]!.type, nodes[i]!.properties)
  // 0 unvisited, 1 on the current path, 2 done. Iterative, so a long chain cannot exhaust the stack.
  const state = new Array<number>(nodes.length).fill(0)
  for (let root = 0; root < nodes.length; root++) {
    if (state[root] !== 0 || waits(root)) continue
    const stack: { i: number; edges: Edge[]; at: number }[] = [
      { i: root, edges: edgesOf(nodes[root]!, root), at: 0 },
    ]
    state[root] = 1
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!
      const edge = top.edges[top.at++]
      if (!edge) {
        state[top.i] = 2
        stack.pop()
        continue
      }
      const j = index.get(edge.to)!
      if (waits(j)) continue
      if (state[j] === 1) {
        bag.add(edge.path, `The node ${edge.to} closes a cycle with no wait on it.`)
      } else if (state[j] === 0) {
        state[j] = 1
        stack.push({ i: j, edges: edgesOf(nodes[j]!, j), at: 0 })
      }
    }
  }
}
