// The open state: the graph as columns and the notes' texts in a row apart, trusted only at their own version, rules and save.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { NoteInStorage } from '../../src/core/note-shelf'
import type { Observation } from '../../src/core/types'
import { OPEN_STATE_FORMAT, packIndex, packOpenState, unpackIndex, unpackNoteTexts, unpackOpenState, type SavedNoteTexts, type SavedOpenState } from '../../src/store/open-state'

const note = (slug: string, names: string[]): Observation => ({
  slug, title: slug, content: `about ${names.join(' and ')}`, category: 'fact', tags: ['t'], observedAt: '2026-01-01T00:00:00.000Z', confidence: 1, source: '',
  entities: names.map((name) => ({ name, type: 'person', description: `${name} the person`, queries: [] })),
  relationships: names.length > 1 ? [{ source: names[0]!, type: 'knows', target: names[1]!, description: '', weight: 1 }] : [],
  files: [], createdBy: 'test', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
})

describe('open state', () => {
  const observations = [note('a', ['Ada', 'Bea']), note('b', ['Bea', 'Cy'])]
  const g = Graph.derive(observations)
  const { state: saved, texts: [texts] } = packOpenState('save-1', 7, 'rules@1', g.observationTexts(), g.entities.values(), g.relationships.values())! as { state: SavedOpenState; texts: [SavedNoteTexts] }

  it('packs the graph as columns and the notes as one string in a row apart, and unpacks them at the same version, rules and save', () => {
    expect(saved.format).toBe(OPEN_STATE_FORMAT)
    expect(saved).not.toHaveProperty('observations')
    expect(texts).toMatchObject({ saveId: 'save-1', part: 0, parts: 1, from: 0 })
    expect(texts.ends).toBeInstanceOf(Float64Array)
    const state = unpackOpenState(structuredClone(saved), 7, 'rules@1')!
    expect(state.saveId).toBe('save-1')
    expect(state.slugs).toEqual(['a', 'b'])
    expect(state.entities).toEqual([...g.entities.values()])
    expect([...state.relationships]).toEqual([...g.relationships.values()])
    // the notes are known, their texts still in storage
    const shelf = state.observations
    expect(shelf.size).toBe(2)
    expect(shelf.has('b')).toBe(true)
    expect(shelf.inStorageCount).toBe(2)
    expect(() => shelf.get('b')).toThrow(NoteInStorage)
    const cut = unpackNoteTexts(structuredClone(texts), 'save-1', state.slugs!, 0)!
    expect(cut.slugs).toEqual(['a', 'b'])
    shelf.takeInPart(cut.from, cut.slugs, cut.text, cut.ends)
    expect(shelf.inStorageCount).toBe(0)
    expect([...shelf]).toEqual(observations)
  })

  it('saves when each note was observed, so its time is known before its text; a time the ms would not spell back is left to the text', () => {
    const odd = { ...note('c', ['Cy']), observedAt: '2026-01-01T00:00:00Z' }
    const gt = Graph.derive([...observations, odd])
    const { state } = structuredClone(packOpenState('save-3', 1, 'r', gt.observationTexts(), gt.entities.values(), gt.relationships.values()))!
    expect([...state.times!]).toEqual([Date.parse('2026-01-01T00:00:00.000Z'), Date.parse('2026-01-01T00:00:00.000Z'), NaN])
    const open = unpackOpenState(state, 1, 'r')!
    const shelf = open.observations!
    expect(shelf.observedAt('a')).toBe('2026-01-01T00:00:00.000Z')
    expect(shelf.untimedAmong(['a', 'b', 'c'])).toEqual(['c'])
    expect(() => shelf.observedAt('c')).toThrow(NoteInStorage)
    expect(shelf.inStorageCount).toBe(3)
    // times of another length are not these notes': every note is then untimed
    const other = unpackOpenState({ ...state, times: new Float64Array(2) }, 1, 'r')!
    expect(other.observations!.untimedAmong(['a', 'b', 'c'])).toEqual(['a', 'b', 'c'])
  })

  it('saves the texts in parts of about the size asked, each read on its own', () => {
    const many = Array.from({ length: 7 }, (_, i) => note(`n${i}`, ['Ada', `P${i}`]))
    const gm = Graph.derive(many)
    const size = JSON.stringify(many[0]).length
    const { state, texts: parts } = structuredClone(packOpenState('save-2', 1, 'r', gm.observationTexts(), gm.entities.values(), gm.relationships.values(), size * 2))!
    expect(parts.map((p) => [p.part, p.parts, p.from, p.ends.length])).toEqual([[0, 4, 0, 2], [1, 4, 2, 2], [2, 4, 4, 2], [3, 4, 6, 1]])
    const open = unpackOpenState(state, 1, 'r')!
    // read out of order, as a later part may come first
    for (const p of [...parts].reverse()) {
      const cut = unpackNoteTexts(p, 'save-2', open.slugs!, p.part)!
      open.observations!.takeInPart(cut.from, cut.slugs, cut.text, cut.ends)
    }
    expect([...open.observations!]).toEqual(many)
    expect(unpackNoteTexts(parts[1], 'save-2', open.slugs!, 2)).toBeUndefined()
  })

  it('trusts a texts part of the same save and place only, cut as its slugs say', () => {
    expect(unpackNoteTexts(texts, 'save-2', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackNoteTexts(texts, 'save-1', ['a', 'b'], 1)).toBeUndefined()
    expect(unpackNoteTexts(texts, 'save-1', ['a'], 0)).toBeUndefined()
    expect(unpackNoteTexts({ ...texts, from: 1 }, 'save-1', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackNoteTexts({ ...texts, text: `${texts.text} ` }, 'save-1', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackNoteTexts({ ...texts, ends: [...texts.ends] }, 'save-1', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackNoteTexts({ ...texts, ends: new Float64Array([3, 2]) }, 'save-1', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackNoteTexts(undefined, 'save-1', ['a', 'b'], 0)).toBeUndefined()
    expect(unpackOpenState({ ...saved, slugs: '[1, 2]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, slugs: '["a"]' }, 7, 'rules@1')).toBeUndefined()
  })

  it('is not trusted at another version, under other rules, or unreadable', () => {
    expect(unpackOpenState(saved, 8, 'rules@1')).toBeUndefined()
    expect(unpackOpenState(saved, 7, 'rules@2')).toBeUndefined()
    expect(unpackOpenState({ ...saved, slugs: '["a"]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, slugs: '[1, 2]' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, slugs: '["a",' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, saveId: undefined }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, graph: undefined }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, graph: { ...saved.graph, edgeSources: [0] } }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState({ ...saved, format: 'cairn-open-state@99' }, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState(undefined, 7, 'rules@1')).toBeUndefined()
    expect(unpackOpenState('text', 7, 'rules@1')).toBeUndefined()
  })

  it('reads no older form: a cache of one is a miss, and open derives from the rows', () => {
    const third = { ...saved, format: 'cairn-open-state@3', observations: texts.text, ends: texts.ends }
    const second = { format: 'cairn-open-state@2', version: 7, rules: 'rules@1', saveId: 'save-1', observations: texts.text, slugs: saved.slugs, ends: JSON.stringify([...texts.ends]), entities: JSON.stringify([...g.entities.values()]), relationships: JSON.stringify([...g.relationships.values()]) }
    const first = { ...second, format: 'cairn-open-state@1', observations: JSON.stringify(observations) }
    const unpacked = { version: 7, rules: 'rules@1', entities: [...g.entities.values()], relationships: [...g.relationships.values()] }
    for (const old of [third, second, first, unpacked]) expect(unpackOpenState(structuredClone(old), 7, 'rules@1')).toBeUndefined()
  })

  it('gives a note back unparsed when saved again, and a damaged one as storage_failed', () => {
    const state = unpackOpenState(structuredClone(saved), 7, 'rules@1')!
    const cut = unpackNoteTexts(structuredClone(texts), 'save-1', state.slugs, 0)!
    state.observations.takeInPart(cut.from, cut.slugs, cut.text, cut.ends)
    const again = Graph.fromRows(state.observations, new Map(), state.entities, state.relationships)
    expect([...again.observationTexts()]).toEqual(observations.map((o) => [o.slug, JSON.stringify(o), Date.parse(o.observedAt)]))
    const damaged = unpackOpenState(structuredClone(saved), 7, 'rules@1')!
    const wrong = unpackNoteTexts({ ...texts, text: texts.text.replace('"slug":"b"', '"slug":"x"') }, 'save-1', damaged.slugs, 0)!
    damaged.observations.takeInPart(wrong.from, wrong.slugs, wrong.text, wrong.ends)
    expect(() => damaged.observations.get('b')).toThrow(expect.objectContaining({ code: 'storage_failed' }))
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
