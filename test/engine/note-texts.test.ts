// The texts an open leaves in storage come in part by part, each when the reader allows, and
// from the observation rows where a part is missing; a note nowhere to be found fails the read.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import type { Observation } from '../../src/core/types'
import { readNotesInto, type NoteSource } from '../../src/engine/memory-engine'
import { packOpenState, unpackNoteTexts, unpackOpenState } from '../../src/store/open-state'

const note = (i: number): Observation => ({
  slug: `n${i}`, title: `n${i}`, content: `note ${i}`, category: 'fact', tags: [], observedAt: '2026-01-01T00:00:00.000Z', confidence: 1, source: '',
  entities: [{ name: `Thing ${i % 3}`, type: 'thing', description: `thing ${i % 3}`, queries: [] }], relationships: [], files: [],
  createdBy: 'test', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
})

function opened(count: number, partChars: number) {
  const notes = Array.from({ length: count }, (_, i) => note(i))
  const derived = Graph.derive(notes)
  const saved = structuredClone(packOpenState('s', 1, 'r', derived.observationTexts(), derived.entities.values(), derived.relationships.values(), partChars))!
  const state = unpackOpenState(saved.state, 1, 'r')!
  const graph = Graph.fromRows(state.observations!, new Map(), state.entities, state.relationships, state.noteEntities)
  const read: string[] = []
  const source = (parts = saved.texts, rows = notes): NoteSource => ({
    part: async (i) => {
      read.push(`part ${i}`)
      return unpackNoteTexts(parts[i], 's', state.slugs!, i)
    },
    rows: async () => {
      read.push('rows')
      return rows
    },
    some: async (slugs) => rows.filter((o) => slugs.includes(o.slug)),
  })
  return { notes, saved, graph, read, source }
}

describe('reading the notes an open left in storage', () => {
  it('reads the parts in order, each after the reader allows it', async () => {
    const { notes, saved, graph, read, source } = opened(9, 2 * JSON.stringify(note(0)).length)
    expect(saved.texts.length).toBe(5)
    let allowed = 0
    await readNotesInto(graph, source(), async () => void allowed++)
    expect(read).toEqual(['part 0', 'part 1', 'part 2', 'part 3', 'part 4'])
    expect(allowed).toBe(5)
    expect(graph.notesInStorage).toBe(0)
    expect([...graph.allObservations()]).toEqual(notes)
  })

  it('takes what the parts left from the rows, keeping notes already read', async () => {
    const { notes, saved, graph, read, source } = opened(9, 2 * JSON.stringify(note(0)).length)
    graph.takeInNotes([notes[0]!])
    await readNotesInto(graph, source([saved.texts[0]!, { ...saved.texts[1]!, saveId: 'another save' }]))
    expect(read).toEqual(['part 0', 'part 1', 'rows'])
    expect([...graph.allObservations()]).toEqual(notes)
  })

  it('fails with storage_failed when a note is in no part and no row', async () => {
    const { notes, graph, source } = opened(4, 1_000_000)
    await expect(readNotesInto(graph, source([], notes.slice(1)))).rejects.toMatchObject({ code: 'storage_failed' })
    expect(graph.notesInStorage).toBe(1)
    expect(() => graph.getObservation('n0')).toThrow(/not read from storage/)
  })
})
