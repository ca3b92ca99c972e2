// A new name needs no typing: its description is proposed from the sentence that names it, never
// blank, and its type is guessed from the types the memory gives names like it.
import { describe, expect, it } from 'vitest'
import { draftGraph, readDraft } from '../../src/app/capture/draft'
import { NameFinder } from '../../src/app/capture/mentions'
import { proposedDescription, TypeGuesser } from '../../src/app/capture/proposals'
import type { Vocabulary } from '../../src/core/notes'

const vocabulary: Vocabulary = {
  entities: [
    { key: 'amara okafor', name: 'Amara Okafor', type: 'person', degree: 3 },
    { key: 'harbor clinic', name: 'Harbor Clinic', type: 'organization', degree: 2 },
    { key: 'city clinic', name: 'City Clinic', type: 'organization', degree: 1 },
    { key: 'rowing club', name: 'Rowing Club', type: 'club', degree: 1 },
    { key: 'night rota', name: 'Night Rota', type: 'thing', degree: 0 },
  ],
  aliases: [],
  relationshipTypes: [],
}

describe('a proposed description', () => {
  const text = 'Met [[Maria Chen]] from Acme Corp today. She leads the [[Atlas migration]] and wants [[Bob Smith]] to review it!\n[[Zed]]'
  const at = (name: string) => text.indexOf(`[[${name}`)

  it('is the sentence naming the entity, as saved (links read as words)', () => {
    expect(proposedDescription(text, at('Maria Chen'), 'Maria Chen', 'x')).toBe('Met Maria Chen from Acme Corp today.')
    expect(proposedDescription(text, at('Bob Smith'), 'Bob Smith', 'x')).toBe('She leads the Atlas migration and wants Bob Smith to review it!')
  })

  it('is never blank: a sentence of the name alone gives the fallback', () => {
    expect(proposedDescription(text, at('Zed'), 'Zed', 'Named in the note “Met Maria Chen”')).toBe('Named in the note “Met Maria Chen”')
  })

  it('is cut at a word when the sentence is long', () => {
    const long = `[[Ada]] ${'wrote many careful notes about the engine '.repeat(8)}.`
    const d = proposedDescription(long, 0, 'Ada', 'x')
    expect(d.length).toBeLessThanOrEqual(161)
    expect(d.endsWith('…')).toBe(true)
    expect(d.startsWith('Ada wrote many careful notes')).toBe(true)
  })
})

describe('a guessed type', () => {
  const guesser = new TypeGuesser(vocabulary.entities)

  it('is the type known names ending in the same word have, else those starting with it', () => {
    expect(guesser.guess('Dental Clinic')).toBe('organization')
    expect(guesser.guess('Amara Chen')).toBe('person')
    expect(guesser.guess('Chess Club')).toBe('club')
  })

  it('is left to the default when nothing alike is known, and never guesses the default itself', () => {
    expect(guesser.guess('Bob Smith')).toBe('')
    expect(guesser.guess('Day Rota')).toBe('')
    expect(guesser.guess('Clinic')).toBe('organization')
  })
})

describe('the write from a note with new names and nothing typed for them', () => {
  it('describes each new name from its sentence, guesses its type, and keeps what the person typed', () => {
    const text = 'Met [[Maria Chen]] at the [[Dental Clinic]]. Amara Okafor joined.'
    const finder = new NameFinder(vocabulary)
    const view = readDraft(text, finder, { accepted: new Set(['amara okafor']), dismissed: new Set(), reversed: new Set() })
    const guesser = new TypeGuesser(vocabulary.entities)
    const proposed = new Map(view.linked.filter((e) => !e.known).map((e) => [e.key, { type: guesser.guess(e.name), description: proposedDescription(text, e.at, e.name, 'x') }]))
    const untouched = draftGraph(view, new Map(), new Map([['amara okafor', 'person']]), new Map(), proposed)
    expect(untouched.entities).toEqual([
      { name: 'Maria Chen', description: 'Met Maria Chen at the Dental Clinic.' },
      { name: 'Dental Clinic', description: 'Met Maria Chen at the Dental Clinic.', type: 'organization' },
      { name: 'Amara Okafor', type: 'person' },
    ])
    // typed over: the type wins, a description typed away to nothing falls back to the proposal
    const typed = draftGraph(view, new Map([['maria chen', { type: 'person', description: '  ' }], ['dental clinic', { type: '' }]]), new Map(), new Map(), proposed)
    expect(typed.entities.slice(0, 2)).toEqual([
      { name: 'Maria Chen', description: 'Met Maria Chen at the Dental Clinic.', type: 'person' },
      { name: 'Dental Clinic', description: 'Met Maria Chen at the Dental Clinic.' },
    ])
  })
})
