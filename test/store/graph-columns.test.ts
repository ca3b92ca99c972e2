// The graph saved as columns gives back exactly the entities and relationships it was given,
// and columns that do not fit together are refused rather than read wrongly.
import { describe, expect, it } from 'vitest'
import { packGraph, unpackGraph } from '../../src/store/graph-columns'
import type { Entity, Relationship } from '../../src/core/types'

const entity = (key: string, more: Partial<Entity> = {}): Entity => ({ key, name: key.toUpperCase(), type: 'person', description: `${key} described`, descriptions: [], queries: [], degree: 1, observations: ['n1'], ...more })
const edge = (source: string, type: string, target: string, more: Partial<Relationship> = {}): Relationship => ({ key: `${source}\u0000${type}\u0000${target}`, source, type, target, description: '', weight: 1, observations: ['n1'], ...more })

describe('graph columns', () => {
  const slugs = ['n1', 'n2', 'n3']
  const entities = [
    entity('ada', { descriptions: ['a mathematician'], queries: ['who wrote the notes?'], observations: ['n1', 'n3'], degree: 2 }),
    entity('babbage', { type: 'inventor', observations: [] }),
    entity('engine', { type: 'thing', description: 'Ünïcode \u2028 "quoted"', degree: 0 }),
  ]
  const relationships = [
    edge('ada', 'knows', 'babbage', { description: 'met in 1833', weight: 2.5, observations: ['n2', 'n3'] }),
    edge('babbage', 'built', 'engine'),
    // an end that is not an entity still reads back
    edge('ada', 'wrote', 'sketch', { observations: [] }),
  ]

  it('gives back what it was given, through structured clone', () => {
    const packed = structuredClone(packGraph(slugs, entities, relationships))
    expect(packed?.edgeSources).toBeInstanceOf(Uint32Array)
    const unpacked = unpackGraph(packed, slugs)!
    expect(unpacked.entities).toEqual(entities)
    // the edges stay columns until read
    expect([...unpacked.relationships]).toEqual(relationships)
    const empty = unpackGraph(packGraph(slugs, [], []), slugs)!
    expect([empty.entities, [...empty.relationships]]).toEqual([[], []])
  })

  it('tells which entities each note backs, by the note\'s place in the slugs', () => {
    const { noteEntities } = unpackGraph(structuredClone(packGraph(slugs, entities, relationships)), slugs)!
    expect(slugs.map((_, place) => noteEntities.keysAt(place))).toEqual([['ada', 'engine'], [], ['ada']])
  })

  it('packs nothing it could not give back', () => {
    expect(packGraph(slugs, [entity('ada', { observations: ['gone'] })], [])).toBeUndefined()
    expect(packGraph(slugs, [entity('ada'), entity('ada')], [])).toBeUndefined()
    expect(packGraph(slugs, entities, [{ ...edge('ada', 'knows', 'babbage'), key: 'other' }])).toBeUndefined()
    expect(packGraph(slugs, entities, [edge('ada', 'knows', 'babbage'), edge('ada', 'knows', 'babbage')])).toBeUndefined()
  })

  it('refuses columns that do not fit together', () => {
    const packed = packGraph(slugs, entities, relationships)!
    const damaged: unknown[] = [
      undefined,
      'columns',
      { ...packed, entityCount: 4 },
      { ...packed, names: '["ada"]' },
      { ...packed, names: '[1, 2, 3]' },
      { ...packed, entityTypes: new Uint32Array([0, 9, 0]) },
      { ...packed, entityTypes: [0, 0, 0] },
      { ...packed, entityNotes: new Uint32Array([0, 7, 0]) },
      { ...packed, entityNoteCounts: new Uint32Array([2, 0, 2]) },
      { ...packed, edgeTargets: new Uint32Array([1, 2]) },
      { ...packed, edgeSources: new Uint32Array([0, 1, 40]) },
      { ...packed, edgeWeights: new Float32Array([1, 1, 1]) },
      { ...packed, entityLists: '[[7, [], []]]' },
      { ...packed, entityLists: '[[0, [1], []]]' },
      { ...packed, edgeDescriptions: '[[0, 5]]' },
      { ...packed, edgeDescriptions: '{' },
      { ...packed, edgeDescriptions: '[[3, "no such edge"]]' },
      { ...packed, edgeNotes: new Uint32Array([1, 7, 0]) },
      { ...packed, edgeNoteCounts: new Uint32Array([2, 2, 0]) },
      { ...packed, edgeTypes: new Uint32Array([0, 1, 9]) },
    ]
    for (const columns of damaged) expect(unpackGraph(columns, slugs)).toBeUndefined()
    // numbers into the notes must name notes that are there
    expect(unpackGraph(packed, ['n1'])).toBeUndefined()
  })
})
