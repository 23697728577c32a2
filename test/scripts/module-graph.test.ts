/** The cycle finder of scripts/check-module-graph.ts, over small graphs built here. */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
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
} from '../../scripts/module-graph.js'

function graphOf(...imports: [string, string, ...string[]][]): Graph {
  const graph: Graph = new Map()
  for (const [from, to, ...files] of imports) {
    for (const file of files.length > 0 ? files : [`${from}/${from}.ts`]) addImport(graph, from, to, file)
  }
  return graph
}

describe('module graph', () => {
  it('finds no cycle in a layered graph, and ignores a module importing itself', () => {
    const graph = graphOf(
      ['campaigns', 'lists'],
      ['campaigns', 'messages'],
      ['lists', 'accounts'],
      ['lists', 'lists'],
    )
    assert.deepEqual(findCycles(graph), [])
    assert.equal(graph.get('lists')!.has('lists'), false)
  })

  it('finds each cycle as one group, apart from the modules around it', () => {
    const graph = graphOf(
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
      ['c', 'd'], // d is below the cycle, not in it
      ['x', 'y'],
      ['y', 'x'],
      ['x', 'a'], // x imports into the first cycle without closing one
    )
    assert.deepEqual(findCycles(graph), [
      ['a', 'b', 'c'],
      ['x', 'y'],
    ])
    assert.deepEqual(cycleEdges(graph, ['a', 'b', 'c']).map(edgeKey), ['a -> b', 'b -> c', 'c -> a'])
  })

  it('names the shortest cycle an import closes', () => {
    const graph = graphOf(['a', 'b'], ['b', 'c'], ['c', 'a'], ['b', 'a'])
    const [scc] = findCycles(graph)
    assert.deepEqual(scc, ['a', 'b', 'c'])
    const edge = (from: string, to: string) => graph.get(from)!.get(to)!
    assert.deepEqual(cycleThrough(graph, edge('a', 'b'), scc!), ['a', 'b', 'a'])
    assert.deepEqual(cycleThrough(graph, edge('c', 'a'), scc!), ['c', 'a', 'b', 'c'])
  })

  it('orders a cycle so that the fewest importing files point upward', () => {
    // messages is imported by three files of events; events by one file of messages: that one runs upward.
    const graph = graphOf(
      ['events', 'messages', 'events/a.ts', 'events/b.ts', 'events/c.ts'],
      ['messages', 'events', 'messages/deliver.ts'],
    )
    const { order, upward } = layerOrder(graph, findCycles(graph)[0]!)
    assert.deepEqual(order, ['messages', 'events'])
    assert.deepEqual(upward.map(edgeKey), ['messages -> events'])
    assert.deepEqual(upward[0]!.files, ['messages/deliver.ts'])
  })

  it('orders a cycle too large to try every order', () => {
    // A chain m0 ← m1 ← … ← m9 closed by one import m0 → m9: one ring, so one import upward, any of them.
    const imports: [string, string][] = []
    for (let i = 1; i < 10; i++) imports.push([`m${i}`, `m${i - 1}`])
    imports.push(['m0', 'm9'])
    const graph = graphOf(...imports)
    const [scc] = findCycles(graph)
    assert.equal(scc!.length, 10)
    const { order, upward } = layerOrder(graph, scc!)
    assert.equal(order.length, 10)
    assert.equal(upward.length, 1)
    const rank = new Map(order.map((m, i) => [m, i]))
    assert.ok(rank.get(upward[0]!.from)! < rank.get(upward[0]!.to)!, 'the upward import points up the order')
  })
})

describe('module layers', () => {
  it('finds the imports that run up the layers, and judges no module outside them', () => {
    const graph = graphOf(
      ['outcomes', 'events'], // down: fine
      ['events', 'messages'], // down: fine
      ['messages', 'events'], // same layer: the cycle check judges it, not this
      ['subscribers', 'outcomes', 'subscribers/a.ts'], // up
      ['delivery', 'outcomes'], // delivery is in no layer
      ['events', 'delivery'],
    )
    const layers = [['messages', 'events'], ['subscribers'], ['outcomes']]
    const up = upwardImports(graph, layers)
    assert.deepEqual(up.map(edgeKey), ['subscribers -> outcomes'])
    assert.deepEqual(up[0]!.files, ['subscribers/a.ts'])
  })

  it('follows imports file to file and names the chain that reaches each', () => {
    const imports: Record<string, string[]> = {
      'a/index.ts': ['a/service.ts'],
      'a/service.ts': ['b/index.ts', 'a/index.ts'],
      'b/index.ts': ['b/b.routes.ts'],
      'c/index.ts': [],
    }
    const chains = reachable('a/index.ts', (f) => imports[f] ?? [])
    assert.deepEqual(chains.get('b/b.routes.ts'), [
      'a/index.ts',
      'a/service.ts',
      'b/index.ts',
      'b/b.routes.ts',
    ])
    assert.equal(chains.has('c/index.ts'), false)
    assert.equal(chains.size, 4)
  })
})
