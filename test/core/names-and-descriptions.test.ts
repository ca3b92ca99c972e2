// Entity identity keeps the symbols that carry meaning; an entity shows the description most
// of its notes give, and a note may name it without describing it.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { legacyNameKey, normalizeName } from '../../src/core/normalize'
import type { Observation } from '../../src/core/types'

function note(slug: string, day: number, entities: Array<{ name: string; description?: string; type?: string }>): Observation {
  const at = new Date(Date.UTC(2025, 0, day)).toISOString()
  return {
    slug, title: slug, content: slug, category: 'note', tags: [], observedAt: at, confidence: 1, source: '', files: [], relationships: [],
    entities: entities.map((e) => ({ name: e.name, type: e.type ?? (e.description ? 'thing' : ''), description: e.description ?? '', queries: [] })),
    createdBy: 'x', createdAt: at, updatedAt: at,
  }
}

describe('names', () => {
  it('never conflate names that differ by a meaningful symbol', () => {
    const keys = ['C++', 'C#', 'C', '.NET', 'NET', '+1', '-1', '1', '$5', '5', '50%', '50'].map(normalizeName)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('still trim what only wraps a name', () => {
    expect(normalizeName('ACME Corp.')).toBe(normalizeName('acme corp'))
    expect(normalizeName('"Ada  Lovelace",')).toBe('ada lovelace')
    expect(normalizeName('(C++)')).toBe('c++')
    expect(normalizeName('!!!')).toBe('')
    expect(normalizeName('+++')).toBe('')
  })

  it('a merge recorded under an older key keeps applying to the names it was made for', () => {
    expect(legacyNameKey('C++')).toBe('c')
    const g = Graph.derive([note('a', 1, [{ name: 'C++', description: 'a language' }]), note('b', 2, [{ name: 'CPP', description: 'the same language' }])], new Map([['c', 'cpp']]))
    expect([...g.entities.keys()]).toEqual(['cpp'])
  })
})

describe('the description rule', () => {
  it('shows the description most notes give, not the latest passing mention', () => {
    const summary = 'Data engineer who leads the ingestion platform'
    const g = Graph.derive([
      note('a', 1, [{ name: 'Maria', description: summary, type: 'person' }]),
      note('b', 2, [{ name: 'Maria', description: 'data engineer who leads the ingestion platform.' }]),
      note('c', 3, [{ name: 'Maria', description: 'covers on-call', type: 'team' }]),
    ])
    const maria = g.entities.get('maria')!
    expect(maria.description).toBe('data engineer who leads the ingestion platform.')
    expect(maria.type).toBe('team')
    expect(maria.descriptions).toEqual(['covers on-call'])
  })

  it('breaks a tie by the longer description, then the earlier one, whatever the order notes arrive in', () => {
    const notes = [
      note('a', 1, [{ name: 'Maria', description: 'covers on-call' }]),
      note('b', 2, [{ name: 'Maria', description: 'Data engineer who leads the ingestion platform' }]),
      note('c', 3, [{ name: 'Maria', description: 'on call' }]),
    ]
    for (const order of [notes, [...notes].reverse(), [notes[1]!, notes[2]!, notes[0]!]]) {
      expect(Graph.derive(order).entities.get('maria')!.description).toBe('Data engineer who leads the ingestion platform')
    }
    const same = [note('x', 5, [{ name: 'Bo', description: 'first of two' }]), note('y', 6, [{ name: 'Bo', description: 'other of two' }])]
    expect(Graph.derive(same).entities.get('bo')!.description).toBe('first of two')
    expect(Graph.derive([...same].reverse()).entities.get('bo')!.description).toBe('first of two')
  })

  it('a note may name an entity without describing it: it backs the entity, which lives while some note describes it', () => {
    const g = new Graph()
    g.apply('a', note('a', 1, [{ name: 'Maria', description: 'Data engineer' }]))
    g.apply('b', note('b', 2, [{ name: 'maria' }]))
    expect(g.entities.get('maria')!.observations).toEqual(['a', 'b'])
    expect(g.entities.get('maria')!.description).toBe('Data engineer')
    g.apply('a', undefined)
    expect(g.entities.has('maria')).toBe(false)
    g.apply('c', note('c', 3, [{ name: 'Maria', description: 'Engineer' }]))
    expect(g.entities.get('maria')!.observations).toEqual(['b', 'c'])
  })
})
