// What a change reports about backing (which notes back which entity or edge), and the parts of
// the graph kept up as backers come and go rather than recomputed from all of them.
import { describe, expect, it } from 'vitest'
import { Graph, mergeBacking } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import type { Observation } from '../../src/core/types'

type Named = { name: string; description?: string; queries?: string[] }

function note(slug: string, day: number, entities: Named[], relationships: Array<[string, string, string]> = []): Observation {
  const at = `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`
  return {
    slug, title: slug, content: 'c', category: 'note', tags: [], observedAt: at, confidence: 1, source: '',
    entities: entities.map((e) => ({ name: e.name, type: 'person', description: e.description ?? `${e.name} in ${slug}`, queries: e.queries ?? [] })),
    relationships: relationships.map(([source, type, target]) => ({ source, type, target, description: '', weight: 1 })),
    files: [], createdBy: 'x', createdAt: at, updatedAt: at,
  }
}

const sorted = <T>(xs: T[]) => [...xs].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))

describe('backing changes', () => {
  it('name only the pairs a write added or removed, whatever the entity already had', () => {
    const g = new Graph()
    for (let i = 0; i < 50; i++) g.apply(`n${i}`, note(`n${i}`, 1 + (i % 20), [{ name: 'Sam' }, { name: `Topic ${i}` }], [['Sam', 'noted', `Topic ${i}`]]))
    const added = g.preview('n50', note('n50', 25, [{ name: 'Sam' }, { name: 'Topic 50' }], [['Sam', 'noted', 'Topic 50']]))
    expect(sorted(added.backing)).toEqual(sorted([
      { of: 'entity', key: 'sam', slug: 'n50', backs: true },
      { of: 'entity', key: 'topic 50', slug: 'n50', backs: true },
      { of: 'relationship', key: 'sam\u0000noted\u0000topic 50', slug: 'n50', backs: true },
    ]))
    // the hub's row still lists all of its notes, in order
    expect(added.upsertedEntities.find((e) => e.key === 'sam')!.observations).toEqual([...Array.from({ length: 51 }, (_, i) => `n${i}`)].sort())

    // an edit that keeps what the note names changes no backing; dropping a name removes its pairs
    expect(g.apply('n3', note('n3', 2, [{ name: 'Sam', description: 'edited' }, { name: 'Topic 3' }], [['Sam', 'noted', 'Topic 3']])).backing).toEqual([])
    expect(sorted(g.apply('n3', note('n3', 2, [{ name: 'Sam' }])).backing)).toEqual(sorted([
      { of: 'entity', key: 'topic 3', slug: 'n3', backs: false },
      { of: 'relationship', key: 'sam\u0000noted\u0000topic 3', slug: 'n3', backs: false },
    ]))
  })

  it('net out over several changes: added then removed is no change', () => {
    const g = new Graph()
    const a = g.apply('a', note('a', 1, [{ name: 'Ada' }]))
    const b = g.apply('b', note('b', 2, [{ name: 'Ada' }]))
    const gone = g.apply('a', undefined)
    expect(mergeBacking([a, b, gone])).toEqual([{ of: 'entity', key: 'ada', slug: 'b', backs: true }])
  })

  it('follow an alias: the notes of the variant move to the canonical entity', () => {
    const g = Graph.derive([note('a', 1, [{ name: 'Ada Lovelace' }]), note('b', 2, [{ name: 'Countess' }])])
    const merged = g.setAliases(new Map([['countess', 'ada lovelace']]))
    expect(sorted(merged.backing)).toEqual(sorted([
      { of: 'entity', key: 'countess', slug: 'b', backs: false },
      { of: 'entity', key: 'ada lovelace', slug: 'b', backs: true },
    ]))
  })
})

describe('an entity kept up as backers come and go', () => {
  it('takes its display name from the next note naming it once the latest such note is deleted', () => {
    // "Countess" is merged into Ada Lovelace: the newest note names the variant, so the display
    // name comes from the newest note naming the entity itself
    const aliases = new Map([['countess', 'ada lovelace']])
    const notes = [note('a', 1, [{ name: 'Ada Lovelace' }]), note('b', 2, [{ name: 'ADA LOVELACE' }]), note('c', 3, [{ name: 'Countess' }])]
    const g = Graph.derive([], aliases)
    for (const o of notes) g.applyPreviewed(o.slug, o, g.preview(o.slug, o))
    expect(g.entities.get('ada lovelace')!.name).toBe('ADA LOVELACE')
    const delta = g.preview('b', undefined)
    g.applyPreviewed('b', undefined, delta)
    expect(g.entities.get('ada lovelace')!.name).toBe('Ada Lovelace')
    // each note gives its own description: the longer one shows
    expect(g.entities.get('ada lovelace')!.description).toBe('Ada Lovelace in a')
    expect(graphFingerprint(g)).toBe(graphFingerprint(Graph.derive([notes[0]!, notes[2]!], aliases)))
  })

  it('follows the description rule as notes come, go and change: the most given, then the longer, then the first given', () => {
    const g = new Graph()
    for (let i = 1; i <= 5; i++) g.apply(`n${i}`, note(`n${i}`, i, [{ name: 'Ada', queries: i === 2 ? ['who wrote the notes?'] : [] }]))
    // five descriptions, each given once and as long as the others: the first given shows
    expect(g.entities.get('ada')!.description).toBe('Ada in n1')
    g.apply('n1', undefined)
    expect(g.entities.get('ada')!.description).toBe('Ada in n2')
    g.apply('n4', note('n4', 1, [{ name: 'Ada' }]))
    expect(g.entities.get('ada')!.description).toBe('Ada in n4')
    // two notes giving the same words beat one longer description
    g.apply('n6', note('n6', 6, [{ name: 'Ada', description: 'ADA IN N3!' }]))
    expect(g.entities.get('ada')!.description).toBe('ADA IN N3!')
    g.apply('n6', undefined)
    expect(g.entities.get('ada')!.description).toBe('Ada in n4')
    expect(g.entities.get('ada')!.queries).toEqual(['who wrote the notes?'])
    g.apply('n2', note('n2', 2, [{ name: 'Ada' }]))
    expect(g.entities.get('ada')!.queries).toEqual([])
    expect(graphFingerprint(g)).toBe(graphFingerprint(Graph.derive([...['n2', 'n3', 'n4', 'n5']].map((s) => g.getObservation(s)!))))
  })

  it('lists its heaviest edges first, capped, without sorting all of them', () => {
    const g = new Graph()
    for (let i = 0; i < 40; i++) {
      const o = note(`n${i}`, 1, [{ name: 'Hub' }, { name: `T${i}` }], [['Hub', 'links', `T${i}`]])
      o.relationships[0]!.weight = (i * 7) % 5
      g.apply(o.slug, o)
    }
    for (const cap of [0, 1, 12, 40, 50]) {
      const { edges, total } = g.topEdgesOf('hub', cap)
      expect(total).toBe(40)
      expect(edges).toEqual(g.edgesOf('hub').slice(0, cap))
    }
  })

  it('keeps a hub\'s heaviest edges between changes and sees every change that touches them', () => {
    const g = new Graph()
    const linking = (slug: string, other: string, weight: number) => {
      const o = note(slug, 1, [{ name: 'Hub' }, { name: other }], [['Hub', 'links', other]])
      o.relationships[0]!.weight = weight
      return o
    }
    for (let i = 0; i < 300; i++) g.apply(`n${i}`, linking(`n${i}`, `T${i}`, (i * 7) % 5))
    const agrees = (cap: number) => {
      const { edges, total } = g.topEdgesOf('hub', cap)
      expect(total).toBe(g.edgesOf('hub').length)
      expect(edges).toEqual(g.edgesOf('hub').slice(0, cap))
    }
    agrees(12)
    agrees(12)
    agrees(3)
    agrees(40)
    // a heavier edge, a new end, an edge gone, an edge made lighter, and a change through a batch
    g.apply('heavy', linking('heavy', 'T5', 9))
    agrees(12)
    g.apply('n4', undefined)
    agrees(12)
    g.apply('heavy', linking('heavy', 'T5', 0))
    agrees(12)
    g.applyPreviewedChanges(g.previewChanges({ put: [linking('batch', 'T300', 7)], deleted: ['n9'] }))
    agrees(12)
    // a change previewed and thrown away leaves the edges as they were
    g.topEdgesOf('hub', 12)
    g.discardPreviewedChanges(g.previewChanges({ put: [linking('thrown', 'T301', 8)] }))
    agrees(12)
    g.replaceWith(Graph.derive([linking('only', 'T0', 1)]))
    agrees(12)
  })

  it('finds the edges among a set of entities from the ends with fewer edges, as walking every end would', () => {
    const g = new Graph()
    for (let i = 0; i < 50; i++) g.apply(`h${i}`, note(`h${i}`, 1, [{ name: 'Hub' }, { name: `T${i}` }], [['Hub', 'links', `T${i}`], ...(i % 3 ? [[`T${i}`, 'knows', `T${(i + 1) % 50}`] as [string, string, string]] : [])]))
    g.apply('x', note('x', 2, [{ name: 'Ada' }, { name: 'Babbage' }], [['Ada', 'knows', 'Babbage'], ['Babbage', 'met', 'Hub']]))
    const walked = (keys: Set<string>) => sorted([...g.relationships.values()].filter((r) => keys.has(r.source) && keys.has(r.target)).map((r) => r.key))
    for (const keys of [
      new Set(['hub', 't1', 't2', 't3', 'babbage']),
      new Set(['t1', 't2', 'hub']),
      new Set(['ada', 'babbage']),
      new Set(['hub']),
      new Set(['t1', 't2']),
      new Set<string>(),
      new Set(['hub', 'nobody', 'ada']),
    ]) {
      const found = g.edgesAmong(keys)
      expect(new Set(found.map((r) => r.key)).size).toBe(found.length)
      expect(sorted(found.map((r) => r.key))).toEqual(walked(keys))
      for (const r of found) expect(r).toBe(g.relationships.get(r.key))
    }
  })
})
