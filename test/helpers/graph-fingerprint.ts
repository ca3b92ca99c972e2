// A canonical, comparable picture of a graph's derived entities and relationships, for tests
// and benchmarks that check two graphs (or a graph and its stored rows) agree.
import type { Graph } from '../../src/core/graph'

export function graphFingerprint(g: Pick<Graph, 'entities' | 'relationships'>): string {
  const entities = [...g.entities.values()].sort((a, b) => (a.key < b.key ? -1 : 1))
  const rels = [...g.relationships.values()].sort((a, b) => (a.key < b.key ? -1 : 1))
  return JSON.stringify({ entities, rels })
}
