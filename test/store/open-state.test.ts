// The open state: observations and graph packed as strings, trusted only at its own version and rules.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import type { Observation } from '../../src/core/types'
import { OPEN_STATE_FORMAT, packIndex, packOpenState, unpackIndex, unpackOpenState } from '../../src/store/open-state'

const note = (slug: string, names: string[]): Observation => ({
  slug, title: slug, content: `about ${names.join(' and ')}`, category: 'fact', tags: ['t'], observedAt: '2026-01-01T00:00:00.000Z', confidence: 1, source: '',
  entities: names.map((name) => ({ name, type: 'person', description: `${name} the person`, queries: [] })),
  relationships: names.length > 1 ? [{ source: names[0]!, type: 'knows', target: names[1]!, description: '', weight: 1 }] : [],
  files: [], createdBy: 'test', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
})

describe('open state', () => {
  const observations = [note('a', ['Ada', 'Bea']), note('b', ['Bea', 'Cy'])]
  const g = Graph.derive(observations)
  const packed = packOpenState('save-1', 7, 'rules@1', g.observationTexts(), g.entities.values(), g.relationships.values())!

  it('packs the notes as one string and the graph as columns, and unpacks what was packed at the same version and rules', () => {
    expect(packed.format).toBe(OPEN_STATE_FORMAT)
    expect(typeof packed.observations).toBe('string')
    expect(packed.ends).toBeInstanceOf(Float64Array)
    const state = unpackOpenState(structuredClone(packed), 7, 'rules@1')
    expect(state?.saveId).toBe('save-1')
    expect([...state!.observations!]).toEqual(observations)
    expect(state?.observations?.get('b')).toEqual(observations[1])
    expect(state?.entities).toEqual([...g.entities.values()])
    expect(state?.relationships).toEqual([...g.relationships.values()])
  })

  it('is not trusted at another version, under other rules, or unreadable', () => {
    expect(unpackOpenState(packed, 8, 'rules@1')).toBeUndefined()
    expect(unpackOpenState(packed, 7, 'rules@2')).toBeUndefined()
    expect(unpackOpenState({ ...packed, observations: '[{"slug":' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, observations: `${packed.observations} ` }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, ends: new Float64Array([3, 2]) }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, ends: '[3, 2]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, slugs: '["a"]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, slugs: '[1, 2]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, ends: undefined }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, graph: undefined }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, graph: { ...packed.graph, edgeSources: [0] } }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...packed, format: 'cairn-open-state@99' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState(undefined, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState('text', 7, 'rules@1')).toBeUndefined()
  })

  it('reads the first packed form, the observations as one JSON array', () => {
    const first = { format: 'cairn-open-state@1', version: 7, rules: 'rules@1', saveId: 'save-1', observations: JSON.stringify(observations), entities: JSON.stringify([...g.entities.values()]), relationships: JSON.stringify([...g.relationships.values()]) }
    expect([...unpackOpenState(first, 7, 'rules@1')!.observations!]).toEqual(observations)
  })

  it('reads the second form, the graph and the cuts as JSON text', () => {
    const second = { format: 'cairn-open-state@2', version: 7, rules: 'rules@1', saveId: 'save-1', observations: packed.observations, slugs: packed.slugs, ends: JSON.stringify([...packed.ends]), entities: JSON.stringify([...g.entities.values()]), relationships: JSON.stringify([...g.relationships.values()]) }
    const state = unpackOpenState(structuredClone(second), 7, 'rules@1')
    expect([...state!.observations!]).toEqual(observations)
    expect(state?.entities).toEqual([...g.entities.values()])
    expect(state?.relationships).toEqual([...g.relationships.values()])
    expect(unpackOpenState({ ...second, entities: '{}' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...second, ends: '[3, 2]' }, 7, 'rules@1')).toBeUndefined()
  })

  it('gives a note saved as text back unparsed when saved again, and a damaged one as storage_failed', () => {
    const state = unpackOpenState(packed, 7, 'rules@1')!
    const again = Graph.fromRows(state.observations!, new Map(), state.entities, state.relationships)
    expect([...again.observationTexts()]).toEqual(observations.map((o) => [o.slug, JSON.stringify(o)]))
    const text = packed.observations.replace('"slug":"b"', '"slug":"x"')
    expect(() => unpackOpenState({ ...packed, observations: text }, 7, 'rules@1')!.observations!.get('b')).toThrow(expect.objectContaining({ code: 'storage_failed' }))
  })

  it('reads the older unpacked graph as the graph alone, the observations left to their table', () => {
    const old = { version: 7, rules: 'rules@1', entities: [...g.entities.values()], relationships: [...g.relationships.values()] }
    const state = unpackOpenState(old, 7, 'rules@1')
    expect(state?.observations).toBeUndefined()
    expect(state?.entities).toEqual(old.entities)
  })

  it('saves an index snapshot with its arrays of objects as JSON and gives the same snapshot back', () => {
    const snapshot = { format: 'x@1', docs: [{ slug: 'a', text: 'one' }, { slug: 'b', text: 'two' }], words: ['one', 'two'], vectors: new Int8Array([1, -2, 3]) }
    const saved = structuredClone(packIndex(3, 'save-1', snapshot))
    expect(saved).toMatchObject({ version: 3, saveId: 'save-1' })
    expect(saved.snapshot).not.toHaveProperty('docs')
    expect(typeof saved.packed?.docs).toBe('string')
    expect(unpackIndex(saved)).toEqual(snapshot)
    // a row saved before packing reads as it is
    expect(unpackIndex({ version: 3, snapshot })).toBe(snapshot)
    expect(() => unpackIndex({ ...saved, packed: { docs: '[{' } })).toThrow()
  })
})
