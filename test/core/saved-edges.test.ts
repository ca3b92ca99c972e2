// A save's edges kept as columns, with the graph's changes beside them, answer every read as a
// plain map of edges and a map of ends to edge keys would, through any sequence of changes.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { relationshipKey } from '../../src/core/normalize'
import { EdgeEnds, LiveEdges, SavedEdges, type EdgeColumns } from '../../src/core/saved-edges'
import type { Relationship } from '../../src/core/types'

const NAMES = ['ada', 'babbage', 'engine', 'society', 'menabrea']
const TYPES = ['knows', 'built']
const SLUGS = ['n1', 'n2', 'n3']

function edge(source: string, type: string, target: string, weight = 1, observations = ['n1']): Relationship {
  return { key: relationshipKey(source, type, target), source, type, target, description: '', weight, observations }
}

/** Columns for `edges`, numbered as a save numbers them. */
function columns(edges: readonly Relationship[]): EdgeColumns {
  const noteStarts = new Uint32Array(edges.length + 1)
  edges.forEach((r, i) => (noteStarts[i + 1] = noteStarts[i]! + r.observations.length))
  return {
    names: NAMES,
    types: TYPES,
    sources: Uint32Array.from(edges, (r) => NAMES.indexOf(r.source)),
    targets: Uint32Array.from(edges, (r) => NAMES.indexOf(r.target)),
    edgeTypes: Uint32Array.from(edges, (r) => TYPES.indexOf(r.type)),
    weights: Float64Array.from(edges, (r) => r.weight),
    noteStarts,
    notes: Uint32Array.from(edges.flatMap((r) => r.observations.map((s) => SLUGS.indexOf(s)))),
    slugs: SLUGS,
    descriptions: new Map(edges.flatMap((r, i) => (r.description ? [[i, r.description] as const] : []))),
  }
}

const saved = [
  { ...edge('ada', 'knows', 'babbage', 2.5, ['n2', 'n3']), description: 'met in 1833' },
  edge('babbage', 'built', 'engine'),
  edge('ada', 'built', 'engine', 1, []),
  edge('engine', 'knows', 'ada'),
]

const edgeArb = fc.record({ source: fc.constantFrom(...NAMES), type: fc.constantFrom(...TYPES), target: fc.constantFrom(...NAMES), weight: fc.constantFrom(1, 2) })
type Op = { kind: 'set'; r: { source: string; type: string; target: string; weight: number } } | { kind: 'delete'; r: { source: string; type: string; target: string } } | { kind: 'read'; end: string }
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), r: edgeArb }),
  // saved edges are deleted often, so that an end loses all of them
  fc.record({ kind: fc.constant('delete' as const), r: fc.oneof(edgeArb, fc.constantFrom(...saved)) }),
  fc.record({ kind: fc.constant('read' as const), end: fc.constantFrom(...NAMES, 'nobody') }),
)

describe('saved edges', () => {
  it('reads back the edges it was given, each the same object every time', () => {
    const edges = new SavedEdges(columns(saved))
    expect([...edges]).toEqual(saved)
    expect(edges.edgeAt(0)).toBe(edges.edgeAt(0))
    expect(saved.map((r) => edges.numberOf(r.key))).toEqual([0, 1, 2, 3])
    expect(edges.numberOf(relationshipKey('ada', 'knows', 'engine'))).toBe(-1)
    expect(edges.numberOf(relationshipKey('nobody', 'knows', 'ada'))).toBe(-1)
    expect(edges.numberOf('not a key')).toBe(-1)
    expect(edges.keysTouching('engine').sort()).toEqual([saved[1]!.key, saved[2]!.key, saved[3]!.key].sort())
    expect(edges.keysTouching('nobody')).toEqual([])
  })

  it('refuses columns whose numbers point outside their lists', () => {
    const good = columns(saved)
    const damaged: EdgeColumns[] = [
      { ...good, sources: Uint32Array.from([0, 1, 0, 9]) },
      { ...good, edgeTypes: Uint32Array.from([0, 1, 2, 0]) },
      { ...good, notes: Uint32Array.from([1, 3, 0]) },
      { ...good, noteStarts: Uint32Array.from([0, 2, 3, 3, 5]) },
      { ...good, noteStarts: Uint32Array.from([0, 2, 1, 3, 4]) },
      { ...good, weights: new Float64Array(3) },
      { ...good, descriptions: new Map([[4, 'no such edge']]) },
      { ...good, descriptions: new Map([[0.5, 'between edges']]) },
    ]
    for (const c of damaged) expect(() => new SavedEdges(c)).toThrow(RangeError)
  })

  it('refuses a save listing a name twice once its names are mapped, with a stable code', () => {
    const damaged = { ...columns(saved), names: [...NAMES.slice(0, 4), 'ada'] }
    const edges = new SavedEdges(damaged)
    // before the map, a lookup finds the first
    expect(edges.keysTouching('ada')).toContain(saved[0]!.key)
    // idle-time mapping stops there; lookups asked often build the map, and are refused
    expect(edges.mapNames(Infinity)).toBe(true)
    expect(() => {
      for (let i = 0; i < 100; i++) edges.keysTouching('babbage')
    }).toThrow(expect.objectContaining({ code: 'storage_failed' }))
  })

  it('with changes beside it, answers as a map of edges and a map of ends would', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), (ops) => {
        const base = new SavedEdges(columns(saved))
        const live = new LiveEdges(base)
        const ends = new EdgeEnds(base)
        const plain = new Map(saved.map((r) => [r.key, r]))
        const plainEnds = new Map<string, Set<string>>()
        const endsOf = (end: string) => plainEnds.get(end) ?? plainEnds.set(end, new Set()).get(end)!
        for (const r of saved) for (const end of [r.source, r.target]) endsOf(end).add(r.key)
        for (const op of ops) {
          if (op.kind === 'set') {
            const r = edge(op.r.source, op.r.type, op.r.target, op.r.weight)
            live.set(r.key, r)
            plain.set(r.key, r)
            ends.add(r.source, r.key)
            ends.add(r.target, r.key)
            endsOf(r.source).add(r.key)
            endsOf(r.target).add(r.key)
          } else if (op.kind === 'delete') {
            const key = relationshipKey(op.r.source, op.r.type, op.r.target)
            expect(live.delete(key)).toBe(plain.delete(key))
            ends.remove(op.r.source, key)
            ends.remove(op.r.target, key)
            endsOf(op.r.source).delete(key)
            endsOf(op.r.target).delete(key)
          } else {
            expect([...ends.of(op.end)].sort()).toEqual([...endsOf(op.end)].sort())
            for (const key of endsOf(op.end)) expect(live.get(key)).toEqual(plain.get(key))
          }
          expect(live.size).toBe(plain.size)
        }
        const sorted = (entries: Iterable<[string, Relationship]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : 1))
        expect(sorted(live.entries())).toEqual(sorted(plain.entries()))
        expect([...live.keys()].sort()).toEqual([...plain.keys()].sort())
        for (const name of NAMES) {
          expect([...ends.of(name)].sort()).toEqual([...endsOf(name)].sort())
          for (const key of endsOf(name)) expect(ends.has(name, key)).toBe(true)
        }
        for (const r of saved) expect(live.has(r.key)).toBe(plain.has(r.key))
      }),
      { numRuns: 300, seed: 20261206 },
    )
  })
})
