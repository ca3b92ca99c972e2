// What a write returns about each entity it touched, so the caller can reuse names and spot stale edges.
import type { Graph } from './graph'
import { normalizeName } from './normalize'
import type { Neighborhood, Observation } from './types'

export const NEIGHBORHOOD_EDGES = 12

export function neighborhoodOf(graph: Graph, key: string, cap = NEIGHBORHOOD_EDGES): Neighborhood | undefined {
  const e = graph.entities.get(key)
  if (!e) return undefined
  const edges = graph.edgesOf(key)
  const kept = edges.slice(0, cap)
  const neighbors = new Set<string>()
  for (const r of kept) neighbors.add(graph.entities.get(r.source === key ? r.target : r.source)?.name ?? '')
  neighbors.delete('')
  return { entity: e.name, key, degree: e.degree, relationships: kept.map((r) => graph.present(r)), neighbors: [...neighbors], capped: edges.length > cap }
}

export function neighborhoodsOf(graph: Graph, o: Observation): Neighborhood[] {
  const keys = new Set(o.entities.map((e) => graph.resolveName(e.name)))
  for (const r of o.relationships) {
    keys.add(graph.resolveName(r.source))
    keys.add(graph.resolveName(r.target))
  }
  const out: Neighborhood[] = []
  for (const k of keys) {
    const n = neighborhoodOf(graph, k)
    if (n) out.push(n)
  }
  return out
}
