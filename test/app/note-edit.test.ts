// A note edited in place with the capture editor: its links stay linked whether or not the text
// names them, its relationships are offered with their types, and the update sends only what
// changed; "replaces …" offers for single-valued relationship types.
import { describe, expect, it } from 'vitest'
import { draftGraph, readDraft } from '../../src/app/capture/draft'
import { NameFinder } from '../../src/app/capture/mentions'
import { editorStart, editPatch } from '../../src/app/capture/note-edit'
import { replacementsFor, singleValuedEdges } from '../../src/app/capture/replaces'
import type { Vocabulary } from '../../src/core/notes'
import type { Observation } from '../../src/core/types'

const vocabulary: Vocabulary = {
  entities: [
    { key: 'dana whitfield', name: 'Dana Whitfield', type: 'person', degree: 2 },
    { key: 'acme', name: 'Acme', type: 'organization', degree: 1 },
    { key: 'globex', name: 'Globex', type: 'organization', degree: 1 },
    { key: 'atlas', name: 'Atlas', type: 'project', degree: 0 },
  ],
  aliases: [{ variant: 'acme corp', canonical: 'acme' }],
  relationshipTypes: [{ type: 'works_at', count: 1 }],
}
const finder = new NameFinder(vocabulary)
const keyOf = (name: string): string => finder.lookup(name)?.key ?? name.toLowerCase()
const none = { accepted: new Set<string>(), dismissed: new Set<string>(), reversed: new Set<string>() }

const note: Pick<Observation, 'entities' | 'relationships'> = {
  entities: [
    { name: 'Dana Whitfield', type: 'person', description: 'engineer', queries: [] },
    { name: 'Acme Corp', type: 'organization', description: 'maker of anvils', queries: ['anvils'] },
    { name: 'Atlas', type: 'project', description: 'the migration', queries: [] },
  ],
  relationships: [
    { source: 'Dana Whitfield', type: 'works_at', target: 'Acme Corp', description: 'since 2020', weight: 1 },
    // a second relationship on one pair is not shown, so it is never removed by the editor
    { source: 'Acme Corp', type: 'employs', target: 'Dana Whitfield', description: '', weight: 1 },
  ],
}

describe('editing a note with the capture editor', () => {
  const start = editorStart(note, keyOf)

  it('starts from the note: every entity linked (through aliases), its relationships typed as a person reads them', () => {
    expect(start.kept.entities).toEqual([
      { key: 'dana whitfield', name: 'Dana Whitfield', description: 'engineer' },
      { key: 'acme', name: 'Acme Corp', description: 'maker of anvils' },
      { key: 'atlas', name: 'Atlas', description: 'the migration' },
    ])
    expect(start.kept.pairs).toEqual([['dana whitfield', 'acme']])
    expect(start.pairTypes).toEqual({ 'dana whitfield\u0000acme': 'works at' })
  })

  it('keeps a linked entity the text does not name, after the ones it names, and offers its relationship first', () => {
    const draft = readDraft('Atlas went live. Dana Whitfield led it.', finder, none, start.kept)
    expect(draft.linked.map((e) => [e.name, e.known])).toEqual([
      ['Atlas', true],
      ['Dana Whitfield', true],
      ['Acme', true],
    ])
    // nothing of the note is offered again as a mention
    expect(draft.mentions).toEqual([])
    expect(draft.pairs[0]!.id).toBe('dana whitfield\u0000acme')
    expect([draft.pairs[0]!.source.name, draft.pairs[0]!.target.name]).toEqual(['Dana Whitfield', 'Acme'])
  })

  it('sends nothing for the graph when nothing changed, so descriptions and queries stay', () => {
    const draft = readDraft('Dana Whitfield and Atlas.', finder, none, start.kept)
    const graph = draftGraph(draft, new Map(), new Map(vocabulary.entities.map((e) => [e.key, e.type])), new Map(Object.entries(start.pairTypes)))
    expect(editPatch(note, graph, keyOf)).toEqual({})
  })

  it('adds a new link, removes an unlinked one with its relationship, and changes a relationship type', () => {
    const kept = { ...start.kept }
    const decisions = { ...none, dismissed: new Set(['atlas']) }
    const draft = readDraft('Dana Whitfield met [[Maria Chen]].', finder, decisions, kept)
    expect(draft.linked.map((e) => e.name)).toEqual(['Dana Whitfield', 'Maria Chen', 'Acme'])
    const pairTypes = new Map([
      ['dana whitfield\u0000acme', 'consults for'],
      ['dana whitfield\u0000maria chen', 'knows'],
    ])
    const proposed = new Map([['maria chen', { type: '', description: 'Dana Whitfield met Maria Chen.' }]])
    const graph = draftGraph(draft, new Map(), new Map(vocabulary.entities.map((e) => [e.key, e.type])), pairTypes, proposed)
    expect(editPatch(note, graph, keyOf)).toEqual({
      entities: [{ name: 'Maria Chen', description: 'Dana Whitfield met Maria Chen.' }],
      relationships: [
        { source: 'Dana Whitfield', type: 'consults for', target: 'Acme' },
        { source: 'Dana Whitfield', type: 'knows', target: 'Maria Chen' },
      ],
      removeEntities: ['Atlas'],
      removeRelationships: [{ source: 'Dana Whitfield', type: 'works_at', target: 'Acme Corp' }],
    })
  })

  it('sends an entity whose description was changed whole, with its type and queries; a blanked or unchanged one not at all', () => {
    const draft = readDraft('Dana Whitfield at Acme on Atlas.', finder, none, start.kept)
    const graph = draftGraph(draft, new Map(), new Map(), new Map(Object.entries(start.pairTypes)))
    const described = new Map([
      ['acme', 'maker of anvils and rockets'],
      ['dana whitfield', '   '],
      ['atlas', 'the migration'],
    ])
    expect(editPatch(note, graph, keyOf, described)).toEqual({
      entities: [{ name: 'Acme Corp', type: 'organization', description: 'maker of anvils and rockets', queries: ['anvils'] }],
    })
  })

  it('removes nothing twice: a relationship goes with an unlinked end, not by name', () => {
    const draft = readDraft('Atlas.', finder, { ...none, dismissed: new Set(['acme']) }, start.kept)
    const graph = draftGraph(draft, new Map(), new Map(), new Map(Object.entries(start.pairTypes)))
    expect(editPatch(note, graph, keyOf)).toEqual({ removeEntities: ['Acme Corp'] })
  })
})

describe('"replaces …" offers', () => {
  const singleValued = new Set(['works_at'])
  const now = '2026-01-01T00:00:00.000Z'
  const old = { slug: 'dana-joins-acme', title: 'Dana joins Acme', relationships: [{ source: 'Dana Whitfield', type: 'works_at', target: 'Acme Corp', description: '', weight: 1 }] }

  it('only relationships of a single-valued type can replace anything, in any spelling of the type', () => {
    const rels = [
      { source: 'Dana Whitfield', type: 'works at', target: 'Globex' },
      { source: 'Dana Whitfield', type: 'knows', target: 'Acme' },
    ]
    expect(singleValuedEdges(rels, singleValued)).toEqual([rels[0]])
  })

  it('offers the note that gives the source another target, once', () => {
    const edge = { source: 'Dana Whitfield', type: 'works at', target: 'Globex' }
    expect(replacementsFor(edge, [old, old], keyOf, now)).toEqual([
      { slug: 'dana-joins-acme', title: 'Dana joins Acme', source: 'Dana Whitfield', type: 'works_at', was: 'Acme Corp', now: 'Globex' },
    ])
  })

  it('offers nothing for the same target (through an alias), another source, an ended edge, or the note being edited', () => {
    expect(replacementsFor({ source: 'Dana Whitfield', type: 'works_at', target: 'Acme' }, [old], keyOf, now)).toEqual([])
    expect(replacementsFor({ source: 'Atlas', type: 'works_at', target: 'Globex' }, [old], keyOf, now)).toEqual([])
    const ended = { ...old, relationships: [{ ...old.relationships[0]!, validTo: '2025-01-01T00:00:00.000Z' }] }
    expect(replacementsFor({ source: 'Dana Whitfield', type: 'works_at', target: 'Globex' }, [ended], keyOf, now)).toEqual([])
    expect(replacementsFor({ source: 'Dana Whitfield', type: 'works_at', target: 'Globex' }, [old], keyOf, now, 'dana-joins-acme')).toEqual([])
    // a note that states both targets already says nothing one replaces
    const both = { ...old, slug: 'both', relationships: [...old.relationships, { source: 'Dana Whitfield', type: 'works_at', target: 'Globex', description: '', weight: 1 }] }
    expect(replacementsFor({ source: 'Dana Whitfield', type: 'works_at', target: 'Globex' }, [both], keyOf, now)).toEqual([])
  })
})
