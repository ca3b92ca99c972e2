import { describe, expect, it } from 'vitest'
import { MemoryError } from '../../src/index'
import { ada, engine, fixture, society } from './fixture'
import { engineOf } from '../../src/internals'

describe('edit and delete', () => {
  it('keeps the slug when the title changes, and follow-up edits work', async () => {
    const { conn } = await fixture()
    const { slug } = await conn.write({ title: 'Old title', content: 'c', entities: [ada] })
    await conn.update(slug, { title: 'A brand new title' })
    const again = await conn.update(slug, { content: 'new content' })
    expect(again.observation.slug).toBe(slug)
    expect(again.observation.title).toBe('A brand new title')
    expect((await conn.getObservation(slug)).content).toBe('new content')
  })

  it('unions a partial entity list with the current graph; the caller wins on conflicts', async () => {
    const { conn } = await fixture()
    const { slug } = await conn.write({ title: 't', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'designed programs for', target: engine.name }] })
    const res = await conn.update(slug, { entities: [society, { ...ada, description: 'Mathematician and writer, the first programmer' }] })
    const names = res.observation.entities.map((e) => e.name).sort()
    expect(names).toEqual(['Ada Lovelace', 'Analytical Engine', 'Royal Society'])
    expect(res.observation.relationships).toHaveLength(1)
    expect((await conn.inspect('Ada Lovelace')).entity.description).toBe('Mathematician and writer, the first programmer')
  })

  it('removes only what is removed explicitly', async () => {
    const { conn } = await fixture()
    const { slug } = await conn.write({ title: 't', content: 'c', entities: [ada, engine, society], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }, { source: ada.name, type: 'visited', target: society.name }] })
    await conn.update(slug, { removeRelationships: [{ source: 'ada lovelace', type: 'Worked On', target: 'ANALYTICAL ENGINE' }] })
    expect((await conn.inspect('Ada Lovelace')).outgoing.map((r) => r.target)).toEqual(['Royal Society'])
    await conn.update(slug, { removeEntities: ['Royal Society'] })
    await expect(conn.inspect('Royal Society')).rejects.toMatchObject({ code: 'not_found' })
    expect((await conn.inspect('Ada Lovelace')).entity.degree).toBe(0)
    expect((await conn.inspect('Analytical Engine')).entity.name).toBe('Analytical Engine')
  })

  it('returns a review hint with the relationships only for a material description change', async () => {
    const { conn } = await fixture()
    const { slug } = await conn.write({ title: 't', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name, description: 'wrote the notes' }] })
    const cosmetic = await conn.update(slug, { entities: [{ ...ada, description: ada.description.toUpperCase() + '!' }] })
    expect(cosmetic.reviewHints).toEqual([])
    const material = await conn.update(slug, { entities: [{ ...ada, description: 'Poet and translator' }] })
    expect(material.reviewHints).toHaveLength(1)
    expect(material.reviewHints[0]!.entity).toBe('Ada Lovelace')
    expect(material.reviewHints[0]!.relationships).toEqual([{ source: 'Ada Lovelace', type: 'worked_on', target: 'Analytical Engine', description: 'wrote the notes', weight: 1 }])
    // nothing was rewritten automatically
    expect((await conn.inspect('Ada Lovelace')).outgoing[0]!.description).toBe('wrote the notes')
  })

  it('gives no review hint when an edit names a known entity without describing it', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'about Ada', content: 'c', entities: [ada] })
    const { slug } = await conn.write({ title: 'about the engine', content: 'c', entities: [engine] })
    // as the app's editor links a known name: no description of this note's own
    const res = await conn.update(slug, { entities: [{ name: ada.name }] as never })
    expect(res.reviewHints).toEqual([])
    expect((await conn.inspect('Ada Lovelace')).entity.description).toBe(ada.description)
  })

  it('delete prunes only orphans and reports them', async () => {
    const { conn } = await fixture()
    const a = await conn.write({ title: 'a', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    await conn.write({ title: 'b', content: 'c', entities: [ada, society], relationships: [{ source: ada.name, type: 'visited', target: society.name }] })
    const res = await conn.delete(a.slug)
    expect(res.pruned.entities).toEqual(['Analytical Engine'])
    expect(res.pruned.relationships).toEqual([{ source: 'Ada Lovelace', type: 'worked_on', target: 'Analytical Engine', description: '', weight: 1 }])
    const survivor = await conn.inspect('Ada Lovelace')
    expect(survivor.entity.observations).toHaveLength(1)
    expect(survivor.entity.degree).toBe(1)
    await expect(conn.getObservation(a.slug)).rejects.toMatchObject({ code: 'not_found' })
  })

  it('unknown slugs and bad patches are errors that change nothing', async () => {
    const { conn, memory } = await fixture()
    const { slug } = await conn.write({ title: 't', content: 'c', entities: [ada] })
    const before = JSON.stringify(await conn.getObservation(slug))
    for (const p of [conn.update('nope', { title: 'x' }), conn.delete('nope'), conn.update(slug, { title: '' }), conn.update(slug, { entities: [{ name: 'X', description: '' }] }), conn.update(slug, { confidence: -1 })]) {
      await expect(p).rejects.toBeInstanceOf(MemoryError)
    }
    expect(JSON.stringify(await conn.getObservation(slug))).toBe(before)
    expect(engineOf(memory).committedGraph.entities.size).toBe(1)
  })
})
