// When a note was observed, answered for notes an open left in storage from the times the save
// gave, and for notes read or changed since from the note itself.
import { describe, expect, it } from 'vitest'
import { NoteInStorage, NoteShelf } from '../../src/core/note-shelf'
import type { Observation } from '../../src/core/types'

const at = (day: number) => `2026-02-${String(day).padStart(2, '0')}T08:30:00.000Z`

function note(slug: string, observedAt: string): Observation {
  return { slug, title: slug, content: 'c', category: 'note', tags: [], observedAt, confidence: 1, source: '', entities: [], relationships: [], files: [], createdBy: 'x', createdAt: observedAt, updatedAt: observedAt }
}

describe('a note shelf telling when each note was observed', () => {
  it('gives a stored note the time the save gave, every time it is asked, and a changed note its own', () => {
    const shelf = NoteShelf.inStorage(['a', 'b', 'c'], Float64Array.from([Date.parse(at(1)), Date.parse(at(2)), NaN]))
    expect(shelf.observedAt('a')).toBe(at(1))
    expect(shelf.observedAt('a')).toBe(at(1))
    expect(shelf.observedAt('b')).toBe(at(2))
    // a time the save could not give is read from the note, which is still in storage
    expect(() => shelf.observedAt('c')).toThrow(NoteInStorage)
    shelf.set('a', note('a', at(9)))
    expect(shelf.observedAt('a')).toBe(at(9))
    expect(shelf.observedAt('b')).toBe(at(2))
    expect(shelf.observedAt('nobody')).toBeUndefined()
  })
})
