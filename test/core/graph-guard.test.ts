// The graph refuses what the write contract would never produce, whatever a peer's checker let
// through: no entity without a key, no two edges for one relationship written two ways.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import type { Observation } from '../../src/core/types'

function note(slug: string, entities: Observation['entities'], relationships: Observation['relationships']): Observation {
  const t = '2026-01-01T00:00:00.000Z'
  return { slug, title: slug, content: 'c', category: 'note', tags: [], observedAt: t, confidence: 1, source: '', entities, relationships, files: [], createdBy: 'peer', createdAt: t, updatedAt: t }
}

const ada = { name: 'Ada', type: 'person', description: 'mathematician', queries: [] }
const engine = { name: 'Engine', type: 'project', description: 'a machine', queries: [] }

describe("the graph's own guard", () => {
  it('derives no entity from a name of symbols alone, and no edge to it', () => {
    const g = Graph.derive([note('a', [ada, { name: '!!!', type: 'thing', description: 'nothing', queries: [] }], [{ source: 'Ada', type: 'knows', target: '!!!', description: '', weight: 1 }])])
    expect([...g.entities.keys()]).toEqual(['ada'])
    expect(g.relationships.size).toBe(0)
  })

  it('normalizes a relationship type as the write contract does, so one relationship is one edge', () => {
    const g = Graph.derive([
      note('a', [ada, engine], [{ source: 'Ada', type: 'Works On', target: 'Engine', description: '', weight: 1 }]),
      note('b', [ada, engine], [{ source: 'Ada', type: 'works_on', target: 'Engine', description: '', weight: 2 }]),
      note('c', [ada, engine], [{ source: 'Ada', type: '???', target: 'Engine', description: '', weight: 1 }]),
    ])
    expect([...g.relationships.values()].map((r) => [r.type, r.weight, r.observations])).toEqual([['works_on', 3, ['a', 'b']]])
    expect(g.entities.get('ada')!.degree).toBe(1)
  })

  it('keeps the same graph when such notes arrive one at a time', () => {
    const notes = [
      note('a', [ada, engine, { name: '  ', type: 'thing', description: 'blank', queries: [] }], [{ source: 'Ada', type: 'Works-On', target: 'Engine', description: '', weight: 1 }]),
      note('b', [ada, engine], [{ source: 'Ada', type: 'works on', target: 'Engine', description: '', weight: 1 }]),
    ]
    const g = new Graph()
    for (const o of notes) g.apply(o.slug, o)
    expect(graphFingerprint(g)).toBe(graphFingerprint(Graph.derive(notes)))
    expect(g.entities.has('')).toBe(false)
    expect(g.relationships.size).toBe(1)
  })
})
