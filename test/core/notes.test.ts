// Browsing notes: every observation is listed once across pages, in order, under each filter;
// the vocabulary holds every name (not the first hundred) and the used relationship types.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { listNotes, vocabularyOf } from '../../src/core/notes'
import type { Observation } from '../../src/core/types'

function note(i: number, over: Partial<Observation> = {}): Observation {
  const day = String(1 + (i % 28)).padStart(2, '0')
  return {
    slug: `n-${String(i).padStart(3, '0')}`,
    title: `Note ${i}`,
    content: `Body of note ${i}`,
    category: i % 2 ? 'meeting' : 'idea',
    tags: i % 3 ? ['work'] : ['home'],
    observedAt: `2026-11-${day}T10:00:00.000Z`,
    confidence: 1,
    source: '',
    entities: [{ name: `Person ${i}`, type: 'person', description: `someone numbered ${i}`, queries: [] }, { name: 'Harbor Clinic', type: 'org', description: 'clinic by the harbor', queries: [] }],
    relationships: [{ source: `Person ${i}`, type: i % 4 ? 'works_at' : 'visits', target: 'Harbor Clinic', description: '', weight: 1 }],
    files: [],
    createdBy: 'c',
    // written in slug order, one second apart
    createdAt: new Date(Date.UTC(2026, 11, 1, 0, 0, i)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 11, 1, 0, 0, i)).toISOString(),
    ...over,
  }
}

const graph = Graph.derive(Array.from({ length: 150 }, (_, i) => note(i)))

function all(request: Record<string, unknown>): string[] {
  const slugs: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = listNotes(graph, { ...request, limit: 40, ...(cursor ? { cursor } : {}) })
    slugs.push(...page.notes.map((n) => n.slug))
    if (!page.nextCursor) return slugs
    cursor = page.nextCursor
  }
}

describe('listNotes', () => {
  it('pages through every note once, newest write first', () => {
    const slugs = all({})
    expect(slugs).toHaveLength(150)
    expect(new Set(slugs).size).toBe(150)
    expect(slugs[0]).toBe('n-149')
    expect(slugs.at(-1)).toBe('n-000')
    expect(listNotes(graph, {}).total).toBe(150)
  })

  it('orders the timeline by observedAt, ties by slug', () => {
    const page = listNotes(graph, { order: 'observed', limit: 200 })
    const keys = page.notes.map((n) => n.observedAt)
    expect([...keys].sort().reverse()).toEqual(keys)
    expect(page.notes[0]!.observedAt).toBe('2026-11-28T10:00:00.000Z')
  })

  it('filters by category, tags, time and entity (alias-free name, any case)', () => {
    expect(all({ category: 'Meeting' }).every((s) => Number(s.slice(2)) % 2 === 1)).toBe(true)
    expect(all({ category: 'meeting' })).toHaveLength(75)
    expect(all({ tags: ['home'] })).toHaveLength(50)
    expect(all({ entity: 'person 7' })).toEqual(['n-007'])
    expect(all({ entity: 'HARBOR CLINIC' })).toHaveLength(150)
    expect(all({ entity: 'nobody' })).toEqual([])
    // a date alone as `to` covers the whole day
    const day = all({ from: '2026-11-05', to: '2026-11-05' })
    expect(day.length).toBeGreaterThan(0)
    for (const s of day) expect(graph.getObservation(s)!.observedAt.startsWith('2026-11-05')).toBe(true)
  })

  it('keeps its place when a note is written between pages', () => {
    const first = listNotes(graph, { limit: 10 })
    const grown = Graph.derive([...graph.allObservations(), note(999, { createdAt: '2027-01-01T00:00:00.000Z' })])
    const second = listNotes(grown, { limit: 10, cursor: first.nextCursor! })
    expect(second.notes[0]!.slug).toBe('n-139')
  })

  it('rejects bad requests with invalid_request', () => {
    for (const bad of [{ limit: 0 }, { limit: 1.5 }, { order: 'random' }, { cursor: 'nope' }, { tags: 'work' }, { from: 'yesterday' }, { from: '2026-12-02', to: '2026-12-01' }, { colour: 'red' }, 'text']) {
      expect(() => listNotes(graph, bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    }
  })
})

describe('vocabularyOf', () => {
  it('lists every entity, most connected first, and types by use', () => {
    const v = vocabularyOf(graph)
    expect(v.entities).toHaveLength(151)
    expect(v.entities[0]!.name).toBe('Harbor Clinic')
    expect(v.relationshipTypes.map((t) => t.type)).toEqual(['works_at', 'visits'])
    expect(v.relationshipTypes[0]!.count).toBeGreaterThan(v.relationshipTypes[1]!.count)
  })

  it('lists aliases with the entity they now mean', () => {
    const merged = Graph.derive(graph.allObservations(), new Map([['person 1', 'person 2']]))
    expect(vocabularyOf(merged).aliases).toEqual([{ variant: 'person 1', canonical: 'person 2' }])
  })
})
