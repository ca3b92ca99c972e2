// "No match is an answer" and "every note is findable", through the public API: a semantic
// recall's verdict (strong / weak / none) rests on the query's words (or a close paraphrase) in
// descriptions and notes, never on vector nearness alone; a note that names no entity comes back
// on its own words; the response names the signals that ranked it.
import { describe, expect, it } from 'vitest'
import type { Connection } from '../../src/index'
import type { Embedder } from '../../src/search/embedder'
import { defaultEmbedder } from '../support/default-embedder'
import { fixture } from './fixture'

/** A small work memory: ten entities, as a new user would have, and one note that names none. */
async function workMemory(embedder?: Embedder): Promise<{ conn: Connection; desk: string }> {
  const f = await fixture(embedder ? { embedder } : {})
  const person = (name: string, description: string) => ({ name, type: 'person', description })
  await f.conn.write({
    title: 'Atlas kickoff',
    content: 'Maria Chen leads the Atlas migration; Bob Smith reviews the API design.',
    entities: [
      person('Maria Chen', 'Engineering manager at Acme who leads the Atlas migration'),
      person('Bob Smith', 'Staff engineer who reviews API designs'),
      { name: 'Atlas', type: 'project', description: 'Migration of the billing system to the new platform' },
      { name: 'Acme Corp', type: 'organization', description: 'The company the team works for' },
    ],
    relationships: [
      { source: 'Maria Chen', type: 'leads', target: 'Atlas' },
      { source: 'Maria Chen', type: 'works at', target: 'Acme Corp' },
    ],
  })
  await f.conn.write({
    title: 'Offsite',
    content: 'Dana Whitfield plans the team offsite in Lisbon with Priya Nair and Tom Okoro.',
    entities: [
      person('Dana Whitfield', 'Office manager who organizes team events'),
      person('Priya Nair', 'Designer on the Atlas project'),
      person('Tom Okoro', 'Physician who runs the company health checks'),
      { name: 'Lisbon', type: 'place', description: 'City in Portugal where the offsite is held' },
      { name: 'Team offsite', type: 'event', description: 'Yearly three-day gathering of the whole team' },
      { name: 'Quarterly review', type: 'event', description: 'Budget and goals review each quarter' },
    ],
    relationships: [{ source: 'Dana Whitfield', type: 'organizes', target: 'Team offsite' }],
  })
  const written = await f.conn.write({ title: 'Desk', content: 'Buy a standing desk before the Q1 budget closes.' })
  return { conn: f.conn, desk: written.slug }
}

describe.each([
  ['words only', undefined],
  ['hybrid', 'default'],
] as const)('recall verdicts, %s', (_mode, which) => {
  const make = async () => workMemory(which ? await defaultEmbedder() : undefined)

  it('answers a query nothing in the memory holds with none: no entities, no notes, and says so', async () => {
    const { conn } = await make()
    for (const query of ['quantum chromodynamics lecture', 'eigenvalues of a symmetric matrix', 'Haskell monad transformers']) {
      const r = await conn.recall({ query })
      expect(r.match, query).toBe('none')
      expect(r.entities).toEqual([])
      expect(r.observations).toEqual([])
      expect(r.message).toContain('Nothing in this memory matches')
    }
  })

  it('finds a note that names no entity by its own words, among the observations with no entity', async () => {
    const { conn, desk } = await make()
    const r = await conn.recall({ query: 'standing desk' })
    expect(r.match).toBe('strong')
    expect(r.observations[0]).toMatchObject({ slug: desk, entities: [] })
    // and the write of such a note said how it is found
    const { warnings } = await conn.write({ title: 'Router', content: 'Reboot the router if the upstairs signal drops.' })
    expect(warnings.map((w) => w.code)).toContain('no_entity')
  })

  it('a question the memory answers is strong, its matched entities marked strong', async () => {
    const { conn } = await make()
    const r = await conn.recall({ query: 'who leads the Atlas migration' })
    expect(r.match).toBe('strong')
    expect(r.message).toBeUndefined()
    const maria = r.entities.find((e) => e.name === 'Maria Chen')!
    expect(maria).toMatchObject({ via: 'match', match: 'strong' })
  })

  it('a query that names an entity but asks what the memory does not hold is weak, the entity marked weak', async () => {
    const { conn } = await make()
    const r = await conn.recall({ query: "Bob Smith's salary negotiation" })
    expect(r.match).toBe('weak')
    expect(r.message).toContain('Only part of')
    expect(r.entities.find((e) => e.name === 'Bob Smith')).toMatchObject({ via: 'match', match: 'weak' })
    for (const e of r.entities) if (e.via === 'match') expect(e.match).toBe('weak')
  })

  it('names the signals that ranked the recall; a structural recall carries no verdict', async () => {
    const { conn } = await make()
    const r = await conn.recall({ query: 'offsite' })
    expect(r.signals).toEqual(which ? { words: true, vectors: true, model: 'cairn-glove-100d@1' } : { words: true, vectors: false })
    const structural = await conn.recall({ entity: 'Atlas' })
    expect(structural.match).toBeUndefined()
    expect(structural.signals).toBeUndefined()
    expect(structural.observations.length).toBe(1)
  })
})

describe('close paraphrase, in a hybrid memory', () => {
  it('counts a close paraphrase of the query as evidence, a loose likeness not', async () => {
    const { conn } = await workMemory(await defaultEmbedder())
    // "doctor" is nowhere in the memory; "physician" is in Tom Okoro's description
    const r = await conn.recall({ query: 'doctor' })
    expect(r.match).not.toBe('none')
    expect(r.entities[0]).toMatchObject({ name: 'Tom Okoro', via: 'match' })
    // near in vector space, but no word of it or its paraphrase is here
    expect((await conn.recall({ query: 'violin concerto' })).match).toBe('none')
  })

  it('finds the paraphrase in any description the entity was given, not only the one shown', async () => {
    const { conn } = await workMemory(await defaultEmbedder())
    // a longer description wins the display; "physician" is now only in the first one
    await conn.write({ title: 'Health week', content: 'Tom Okoro ran the spring health week.', entities: [{ name: 'Tom Okoro', type: 'person', description: 'Runs the yearly health week for every member of staff in spring' }] })
    expect((await conn.inspect('Tom Okoro')).entity.description).not.toContain('Physician')
    const r = await conn.recall({ query: 'doctor' })
    expect(r.match).not.toBe('none')
    expect(r.entities.map((e) => e.name)).toContain('Tom Okoro')
  })
})
