// Capture from text: links, known names and aliases found in the text, capitalized phrases as
// new-entity offers, relationship offers between linked entities, and the write they make.
import { describe, expect, it } from 'vitest'
import { draftGraph, readDraft, titleFrom } from '../../src/app/capture/draft'
import { capitalizedPhrases, completeLink, NameFinder, openLink, plainText, wikiLinks } from '../../src/app/capture/mentions'
import type { Vocabulary } from '../../src/core/notes'

const vocabulary: Vocabulary = {
  entities: [
    { key: 'ada lovelace', name: 'Ada Lovelace', type: 'person', degree: 3 },
    { key: 'charles babbage', name: 'Charles Babbage', type: 'person', degree: 2 },
    { key: 'royal society', name: 'Royal Society', type: 'org', degree: 0 },
    { key: 'al', name: 'AL', type: 'thing', degree: 0 },
  ],
  aliases: [{ variant: 'countess of lovelace', canonical: 'ada lovelace' }],
  relationshipTypes: [],
}
const finder = new NameFinder(vocabulary)
const none = { accepted: new Set<string>(), dismissed: new Set<string>(), reversed: new Set<string>() }

describe('mentions', () => {
  it('finds known names and aliases in any case, longest first, with a possessive', () => {
    const text = "Met the countess of Lovelace today. Charles Babbage's engine, shown at the royal society; ada lovelace again."
    const found = finder.find(text)
    expect(found.map((m) => [m.name, m.text])).toEqual([
      ['Ada Lovelace', 'countess of Lovelace'],
      ['Charles Babbage', 'Charles Babbage'],
      ['Royal Society', 'royal society'],
      ['Ada Lovelace', 'ada lovelace'],
    ])
    // two-letter names would match everywhere and are not searched for
    expect(finder.find('Al went home')).toEqual([])
  })

  it('reads [[links]], their shown text, and an open link before the caret', () => {
    const text = 'Wrote to [[Ada Lovelace|Ada]] about [[Analytical Engine]].'
    expect(wikiLinks(text).map((l) => [l.name, l.shown])).toEqual([['Ada Lovelace', 'Ada'], ['Analytical Engine', 'Analytical Engine']])
    expect(plainText(text)).toBe('Wrote to Ada about Analytical Engine.')
    expect(openLink('see [[Cha', 9)).toEqual({ start: 4, query: 'Cha' })
    expect(openLink('see [[Cha]] and', 15)).toBeNull()
    expect(completeLink('see [[Cha and', 9, 'Charles Babbage')).toEqual({ text: 'see [[Charles Babbage]] and', caret: 23 })
    expect(completeLink('see [[Cha]] x', 9, 'Charles Babbage').text).toBe('see [[Charles Babbage]] x')
  })

  it('offers capitalized phrases, not a capitalized first word', () => {
    const phrases = capitalizedPhrases('Yesterday I visited the Bank of England with Maria Costa. Lunch was at Noma, in Copenhagen.')
    expect(phrases.map((p) => p.text)).toEqual(['Bank of England', 'Maria Costa', 'Noma', 'Copenhagen'])
  })
})

describe('readDraft', () => {
  const text = 'Ada Lovelace wrote notes on the [[Analytical Engine]] for Charles Babbage. Later she met Mary Somerville.'

  it('links [[names]] at once and offers mentions and phrases until accepted', () => {
    const view = readDraft(text, finder, none)
    expect(view.linked.map((e) => [e.name, e.known])).toEqual([['Analytical Engine', false]])
    expect(view.mentions.map((m) => m.name)).toEqual(['Ada Lovelace', 'Charles Babbage'])
    expect(view.phrases.map((p) => p.name)).toEqual(['Mary Somerville'])
    const accepted = readDraft(text, finder, { ...none, accepted: new Set(['ada lovelace', 'charles babbage', 'mary somerville']) })
    expect(accepted.linked.map((e) => e.name)).toEqual(['Ada Lovelace', 'Analytical Engine', 'Charles Babbage', 'Mary Somerville'])
    expect(accepted.mentions).toEqual([])
    expect(accepted.phrases).toEqual([])
  })

  it('offers pairs within a sentence, and links an entity alone in its sentence to the one before', () => {
    const view = readDraft(text, finder, { ...none, accepted: new Set(['ada lovelace', 'charles babbage', 'mary somerville']) })
    expect(view.pairs.map((p) => `${p.source.name} > ${p.target.name}`)).toEqual([
      'Ada Lovelace > Analytical Engine',
      'Ada Lovelace > Charles Babbage',
      'Analytical Engine > Charles Babbage',
      'Charles Babbage > Mary Somerville',
    ])
    const turned = readDraft(text, finder, { ...none, accepted: new Set(['ada lovelace']), reversed: new Set(['ada lovelace\u0000analytical engine']) })
    expect(turned.pairs.map((p) => `${p.source.name} > ${p.target.name}`)).toEqual(['Analytical Engine > Ada Lovelace'])
  })

  it('writes a description only for new entities, and relationships only where a type was given', () => {
    const view = readDraft(text, finder, { ...none, accepted: new Set(['ada lovelace']) })
    const graph = draftGraph(
      view,
      new Map([['analytical engine', { type: 'machine', description: "Babbage's mechanical computer" }]]),
      new Map([['ada lovelace', 'person']]),
      new Map([['ada lovelace\u0000analytical engine', 'wrote notes on']]),
    )
    expect(graph.entities).toEqual([
      { name: 'Ada Lovelace', type: 'person' },
      { name: 'Analytical Engine', description: "Babbage's mechanical computer", type: 'machine' },
    ])
    expect(graph.relationships).toEqual([{ source: 'Ada Lovelace', type: 'wrote notes on', target: 'Analytical Engine' }])
  })

  it('reads nothing inside a link still being typed', () => {
    const view = readDraft('Met [[Ada Lo', finder, none)
    expect(view.mentions).toEqual([])
    expect(view.phrases).toEqual([])
    expect(titleFrom('Met [[Ada Lo')).toBe('Met Ada Lo')
  })

  it('makes a title from the first sentence when none is given', () => {
    expect(titleFrom('Ada Lovelace wrote the notes. Then more.')).toBe('Ada Lovelace wrote the notes')
    expect(titleFrom('Met [[Ada Lovelace]]\nsecond line')).toBe('Met Ada Lovelace')
    expect(titleFrom('word '.repeat(40)).length).toBeLessThanOrEqual(81)
  })
})

describe('fieldProblems', () => {
  it('places each issue of a rejected write at its row, in plain words, all of them', async () => {
    const { fieldProblems } = await import('../../src/app/capture/field-errors')
    const { MemoryError } = await import('../../src/core/errors')
    const error = new MemoryError('invalid_write', 'write rejected: …', {
      issues: [
        { path: 'entities[1].description', message: 'entity "Leo Brandt" needs a non-empty description: it is what recall matches against' },
        { path: 'relationships[0].target', message: '"Nobody" is neither an entity of this observation nor an existing one' },
        { path: 'content', message: 'is required' },
        { path: 'confidence', message: 'must be a number from 0 to 1' },
        { path: 'entities[5].name', message: 'entity "X" is listed twice in this observation' },
      ],
    })
    expect(fieldProblems(error, ['link:ines', 'link:leo brandt'], ['pair:a'])).toEqual([
      { field: 'entity:link:leo brandt.description', message: 'Entity "Leo Brandt" needs a non-empty description: it is what recall matches against' },
      { field: 'relationship:pair:a', message: '"Nobody" is neither an entity of this observation nor an existing one' },
      { field: 'content', message: 'The note is required' },
      { field: 'confidence', message: 'Confidence must be a number from 0 to 1' },
      { field: 'form', message: 'Entity "X" is listed twice in this observation' },
    ])
    expect(fieldProblems(new Error('offline'), [], [])).toEqual([{ field: 'form', message: 'offline' }])
  })
})
