// The graph view's layout worker, run in Node with a stand-in worker scope: it lays out the
// positions it is sent with ForceAtlas2, within its pass and time budgets, and reports progress.
import { beforeAll, describe, expect, it } from 'vitest'
import type { LayoutReply, LayoutRequest } from '../../src/app/graph/layout-protocol'

type Scope = { onmessage: ((event: { data: LayoutRequest }) => void) | null; postMessage(message: LayoutReply): void }
const replies: LayoutReply[] = []
const scope: Scope = { onmessage: null, postMessage: (m) => void replies.push(m) }

beforeAll(async () => {
  ;(globalThis as unknown as { self: Scope }).self = scope
  await import('../../src/app/graph/layout.worker')
})

/** A ring of 40 cliques of 10, each clique joined to the next, laid on a spiral that ignores them. */
function request(over: Partial<LayoutRequest> = {}): LayoutRequest {
  const n = 400
  const positions = new Float32Array(2 * n)
  for (let i = 0; i < n; i++) {
    const r = Math.sqrt(i + 0.5)
    const a = i * 2.399963
    positions[2 * i] = r * Math.cos(a)
    positions[2 * i + 1] = r * Math.sin(a)
  }
  const edges: number[] = []
  for (let c = 0; c < 40; c++) {
    for (let i = 0; i < 10; i++) for (let j = i + 1; j < 10; j++) edges.push(c * 10 + i, c * 10 + j)
    edges.push(c * 10, ((c + 1) % 40) * 10)
  }
  return { positions, edges: Uint32Array.from(edges), iterations: 60, maxMs: 60_000, progressMs: 60_000, ...over }
}

function run(req: LayoutRequest): LayoutReply[] {
  replies.length = 0
  scope.onmessage!({ data: req })
  return [...replies]
}

/** Mean distance between the ends of an edge, over the mean distance between any two nodes. */
function edgeTightness(positions: Float32Array, edges: Uint32Array): number {
  const d = (a: number, b: number): number => Math.hypot(positions[2 * a]! - positions[2 * b]!, positions[2 * a + 1]! - positions[2 * b + 1]!)
  let edgeSum = 0
  for (let e = 0; e < edges.length; e += 2) edgeSum += d(edges[e]!, edges[e + 1]!)
  let allSum = 0
  let pairs = 0
  const n = positions.length / 2
  for (let a = 0; a < n; a += 3) for (let b = a + 1; b < n; b += 7, pairs++) allSum += d(a, b)
  return edgeSum / (edges.length / 2) / (allSum / pairs)
}

describe('graph layout worker', () => {
  it('runs the requested passes and pulls linked nodes together', () => {
    const req = request()
    const before = edgeTightness(req.positions, req.edges)
    const out = run({ ...req, positions: req.positions.slice() })
    expect(out).toHaveLength(1)
    const [last] = out
    expect(last!.final).toBe(true)
    expect(last!.iterations).toBe(60)
    expect(last!.positions).toHaveLength(800)
    expect(last!.positions.every(Number.isFinite)).toBe(true)
    // on the spiral a clique's members are scattered; laid out they sit together
    expect(edgeTightness(last!.positions, req.edges)).toBeLessThan(before / 2)
  })

  it('stops at its time budget with passes left', () => {
    const out = run(request({ iterations: 1_000_000, maxMs: 50 }))
    const last = out.at(-1)!
    expect(last.final).toBe(true)
    expect(last.iterations).toBeGreaterThan(0)
    expect(last.iterations).toBeLessThan(1_000_000)
    expect(last.ms).toBeLessThan(5_000)
  })

  it('sends positions along the way, then one final reply', () => {
    const out = run(request({ iterations: 40, progressMs: 0 }))
    expect(out.length).toBeGreaterThan(2)
    expect(out.filter((r) => r.final)).toHaveLength(1)
    expect(out.at(-1)!.final).toBe(true)
    const counts = out.map((r) => r.iterations)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(counts.at(-1)).toBe(40)
  })
})
