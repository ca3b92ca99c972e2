// A bounded piece of the entity graph for drawing: around a center entity by hops, or the
// best-connected entities when there is no center. Pure, so the engine and tests share it.
import { MemoryError } from './errors'
import type { Graph } from './graph'
import { normalizeName } from './normalize'

export const DEFAULT_SLICE_NODES = 500
export const MAX_SLICE_NODES = 10_000

export interface GraphSliceOptions {
  /** Entity name to center on; without it the slice starts from the highest-degree entities. */
  center?: string
  /** Most entities to include (default 500, at most 10,000). */
  limit?: number
}

export interface SliceNode {
  key: string
  name: string
  type: string
  degree: number
  /** Hops from the center; 0 for seeds when there is no center. */
  hops: number
}

export interface SliceEdge {
  key: string
  source: string
  target: string
  type: string
  weight: number
}

export interface GraphSlice {
  /** Key of the center entity, or null when none was asked for. */
  center: string | null
  nodes: SliceNode[]
  /** Every live relationship whose two ends are both in `nodes`. */
  edges: SliceEdge[]
  /** True when the limit cut off reachable entities. */
  truncated: boolean
}

function byDegree(graph: Graph): (a: string, b: string) => number {
  return (a, b) => (graph.entities.get(b)?.degree ?? 0) - (graph.entities.get(a)?.degree ?? 0) || (a < b ? -1 : a > b ? 1 : 0)
}

/** @internal it takes the graph, which the published types leave out */
export function graphSlice(graph: Graph, opts: GraphSliceOptions = {}): GraphSlice {
  const limit = opts.limit ?? DEFAULT_SLICE_NODES
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SLICE_NODES) {
    throw new MemoryError('invalid_request', `graphSlice limit must be an integer from 1 to ${MAX_SLICE_NODES}; got ${String(opts.limit)}`)
  }
  const order = byDegree(graph)
  let center: string | null = null
  if (opts.center !== undefined) {
    center = graph.resolveName(opts.center)
    if (!graph.entities.has(center)) {
      throw new MemoryError('not_found', `no entity named "${opts.center}"; check the spelling or recall to find it`, { entity: opts.center })
    }
  }

  const hops = new Map<string, number>()
  // Breadth first: each ring is taken highest degree first, so a cut keeps the hubs.
  // Without a center, all entities in degree order form one ring (disconnected parts included).
  let ring = center !== null ? [center] : [...graph.entities.keys()].sort(order)
  let depth = 0
  let truncated = false
  outer: while (ring.length > 0) {
    const next = new Set<string>()
    for (const k of ring) {
      if (hops.has(k)) continue
      if (hops.size >= limit) {
        truncated = true
        break outer
      }
      hops.set(k, depth)
    }
    for (const k of ring) {
      if (hops.get(k) !== depth) continue
      for (const r of graph.edgesOf(k)) {
        const other = r.source === k ? r.target : r.source
        if (!hops.has(other)) next.add(other)
      }
    }
    ring = [...next].sort(order)
    depth++
  }

  const nodes: SliceNode[] = []
  for (const [key, h] of hops) {
    const e = graph.entities.get(key)
    if (e) nodes.push({ key, name: e.name, type: e.type, degree: e.degree, hops: h })
  }
  // from each node's own edges, each edge once (at its source): a graph opened from a save
  // makes an edge only when read, and a slice reads a few of the memory's 200,000
  const edges: SliceEdge[] = []
  for (const key of hops.keys()) {
    for (const r of graph.eachEdgeOf(key)) {
      if (r.source === key && hops.has(r.target)) edges.push({ key: r.key, source: r.source, target: r.target, type: r.type, weight: r.weight })
    }
  }
  edges.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return { center, nodes, edges, truncated }
}
