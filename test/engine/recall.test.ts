import { describe, expect, it } from 'vitest'
import { engineOf } from '../../src/internals'
import { DEFAULT_TUNING } from '../../src/core/recall'
import { ada, engine, fixture, society } from './fixture'
import { defaultEmbedder } from '../support/default-embedder'

async function seeded() {
  const f = await fixture({ snippetLength: 60 })
  const { conn } = f
  const long = await conn.write({
    title: 'Ada and the engine',
    content: 'Ada Lovelace translated Menabrea\'s article about the Analytical Engine and added notes longer than the article itself.',
    category: 'history',
    tags: ['computing', 'Victorian'],
    observedAt: '1843-09-01',
    entities: [ada, engine],
    relationships: [{ source: ada.name, type: 'wrote notes on', target: engine.name, weight: 3 }],
  })
  const short = await conn.write({
    title: 'Society',
    content: 'Babbage was a fellow.',
    category: 'people',
    tags: ['computing'],
    observedAt: '1816-01-01',
    entities: [society, { name: 'Charles Babbage', type: 'person', description: 'Polymath who designed the Difference Engine', queries: ['who invented the first mechanical computer?'] }],
    relationships: [{ source: 'Charles Babbage', type: 'fellow of', target: society.name }, { source: 'Charles Babbage', type: 'designed', target: engine.name, weight: 2 }],
  })
  return { ...f, long: long.slug, short: short.slug }
}

describe('semantic recall', () => {
  it('ranks entities by description and returns attached entities, edges and snippets', async () => {
    const { conn, long } = await seeded()
    const r = await conn.recall({ query: 'mathematician algorithm' })
    expect(r.mode).toBe('semantic')
    expect(r.entities[0]).toMatchObject({ name: 'Ada Lovelace', via: 'match' })
    // the project attached to the person comes back through the graph
    expect(r.entities.map((e) => e.name)).toContain('Analytical Engine')
    expect(r.relationships).toContainEqual({ source: 'Ada Lovelace', type: 'wrote_notes_on', target: 'Analytical Engine', description: '', weight: 3 })
    const snip = r.observations.find((o) => o.slug === long)!
    expect(snip.truncated).toBe(true)
    expect(snip.snippet.length).toBeLessThanOrEqual(61)
    expect((await conn.getObservation(long)).content.length).toBeGreaterThan(100)
    expect(r.truncation).toBeNull()
  })

  it('folds retrieval queries into matching', async () => {
    const { conn } = await seeded()
    const r = await conn.recall({ query: 'invented' })
    expect(r.entities[0]!.name).toBe('Charles Babbage')
  })

  it('a note whose text matches brings in the entities it names, and comes back through them', async () => {
    const { conn, long } = await seeded()
    const r = await conn.recall({ query: 'Menabrea translated article' })
    const names = r.entities.map((e) => e.name)
    expect(names).toEqual(expect.arrayContaining(['Ada Lovelace', 'Analytical Engine']))
    expect(r.observations[0]!.slug).toBe(long)
    for (const o of r.observations) {
      expect(o.entities.length).toBeGreaterThan(0)
      for (const n of o.entities) expect(names).toContain(n)
    }
  })

  it('descriptions lead: an entity matched by its description ranks above one reached through a note', async () => {
    const { conn } = await seeded()
    const r = await conn.recall({ query: 'polymath Menabrea' })
    const names = r.entities.map((e) => e.name)
    expect(names[0]).toBe('Charles Babbage')
    expect(names.indexOf('Ada Lovelace')).toBeGreaterThan(0)
  })

  it('among the notes of one entity, the one that answers the query comes first, not the newest', async () => {
    const f = await fixture()
    const owner = { name: 'Priya', type: 'person', description: 'The person this memory belongs to' }
    const slugs: string[] = []
    for (let i = 0; i < 40; i++) {
      const topic = i === 7 ? 'Priya adopted a rescue greyhound named Biscuit' : `Priya reviewed quarterly budget item ${i}`
      slugs.push((await f.conn.write({ title: topic, content: `${topic}.`, observedAt: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(), entities: [owner] })).slug)
    }
    const r = await f.conn.recall({ query: 'What is the name of her dog?', limits: { observations: 3 } })
    expect(r.entities[0]!.name).toBe('Priya')
    expect(r.observations.map((o) => o.slug)).toContain(slugs[7])
    const plain = await f.conn.recall({ query: 'greyhound', limits: { observations: 1 } })
    expect(plain.observations[0]!.slug).toBe(slugs[7])
  })

  it('narrows by category, tag and time', async () => {
    const { conn, short } = await seeded()
    const r = await conn.recall({ query: 'engine', category: 'people' })
    expect(r.observations.map((o) => o.slug)).toEqual([short])
    const t = await conn.recall({ query: 'engine', to: '1820-01-01' })
    expect(t.observations.map((o) => o.slug)).toEqual([short])
  })
})

describe('structural recall', () => {
  it('filters observations by category, tags, time range and entity name', async () => {
    const { conn, long, short } = await seeded()
    expect((await conn.recall({ category: 'history' })).observations.map((o) => o.slug)).toEqual([long])
    expect((await conn.recall({ tags: ['Victorian'] })).observations.map((o) => o.slug)).toEqual([long])
    expect((await conn.recall({ tags: ['computing'] })).observations.map((o) => o.slug)).toEqual([long, short])
    expect((await conn.recall({ from: '1800-01-01', to: '1830-01-01' })).observations.map((o) => o.slug)).toEqual([short])
    const byEntity = await conn.recall({ entity: 'analytical engine' })
    expect(byEntity.mode).toBe('structural')
    expect(byEntity.observations.map((o) => o.slug).sort()).toEqual([long])
    expect(byEntity.entities.map((e) => e.name).sort()).toEqual(['Ada Lovelace', 'Analytical Engine'])
  })

  it('rejects bad filters with invalid_request', async () => {
    const { conn } = await seeded()
    await expect(conn.recall({ from: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(conn.recall({ tags: 'x' as never })).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(conn.recall({ limits: { entities: -1 } })).rejects.toMatchObject({ code: 'invalid_request' })
  })
})

describe('payload caps', () => {
  it('caps entities, relationships, observations and bytes, and says so', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'hub', content: 'hub', entities: [{ name: 'Hub', type: 'org', description: 'central hub of the network' }] })
    for (let i = 0; i < 30; i++) {
      await conn.write({
        title: `spoke ${i}`,
        content: `spoke ${i} `.repeat(40),
        entities: [{ name: `Spoke ${i}`, type: 'node', description: `network spoke number ${i} of the hub` }],
        relationships: [{ source: `Spoke ${i}`, type: 'links', target: 'Hub' }],
      })
    }
    const r = await conn.recall({ query: 'network spoke hub', limits: { entities: 5, relationships: 3, observations: 2 } })
    expect(r.entities).toHaveLength(5)
    expect(r.relationships.length).toBeLessThanOrEqual(3)
    expect(r.observations).toHaveLength(2)
    expect(r.truncation).not.toBeNull()
    expect(r.truncation!.entities).toBeGreaterThan(0)
    expect(r.truncation!.note).toMatch(/category, tags/)
    const tiny = await conn.recall({ query: 'network spoke hub', limits: { bytes: 1_500 } })
    expect(new TextEncoder().encode(JSON.stringify(tiny)).length).toBeLessThanOrEqual(1_500)
    expect(tiny.truncation!.observations).toBeGreaterThan(0)
  })
})

describe('structural recall pages', () => {
  it('returns every observation the filters select, newest first, a page at a time, and says truthfully what is left', async () => {
    const f = await fixture()
    const written: string[] = []
    for (let i = 0; i < 20; i++) {
      const r = await f.conn.write({ title: `note ${i}`, content: `note ${i}`, observedAt: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(), entities: [{ name: `Entity ${i}`, type: 'thing', description: `thing number ${i}` }] })
      written.push(r.slug)
    }
    const first = await f.conn.recall({ limits: { observations: 12 } })
    expect(first.observations.map((o) => o.slug)).toEqual([...written].reverse().slice(0, 12))
    expect(first.truncation?.observations).toBe(8)
    expect(first.entities.map((e) => e.name).sort()).toEqual(first.observations.map((o) => o.title.replace('note', 'Entity')).sort())
    const second = await f.conn.recall({ limits: { observations: 12 }, cursor: first.nextCursor })
    expect(second.observations.map((o) => o.slug)).toEqual([...written].reverse().slice(12))
    expect(second.nextCursor).toBeUndefined()
    expect(second.truncation?.observations ?? 0).toBe(0)
    await expect(f.conn.recall({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(f.conn.recall({ query: 'thing', cursor: first.nextCursor })).rejects.toMatchObject({ code: 'invalid_request' })
  })
})

describe('time in a question', () => {
  it('prefers notes from the period a question names, and the oldest when it asks for the first', async () => {
    const f = await fixture()
    const trip = (year: number) => f.conn.write({ title: `Trip ${year}`, content: 'Jo went hiking in the Alps with her sister.', observedAt: `${year}-06-15T00:00:00.000Z`, entities: [{ name: 'Jo', type: 'person', description: 'a hiker' }] })
    const a = await trip(2021)
    const b = await trip(2022)
    const c = await trip(2023)
    const top = async (query: string) => (await f.conn.recall({ query, limits: { observations: 1 } })).observations[0]!.slug
    expect(await top('Where did Jo go hiking in June 2022?')).toBe(b.slug)
    expect(await top('Where did Jo go hiking in 2021?')).toBe(a.slug)
    expect(await top('Where did Jo go hiking the first time?')).toBe(a.slug)
    expect(await top('Where did Jo go hiking?')).toBe(c.slug)
  })
})

describe('notes around the best hits', () => {
  const jo = { name: 'Jo', type: 'person', description: 'a friend' }
  // notes are ordered by when they were written (to the millisecond): a pause keeps two writes apart
  const pause = () => new Promise((resolve) => setTimeout(resolve, 3))

  it('reads a named day, not only its month', async () => {
    const f = await fixture()
    const early = await f.conn.write({ title: 'Early June', content: 'Jo baked bread.', observedAt: '2022-06-02T10:00:00.000Z', entities: [jo] })
    await f.conn.write({ title: 'Late June', content: 'Jo baked bread.', observedAt: '2022-06-20T10:00:00.000Z', entities: [jo] })
    const r = await f.conn.recall({ query: 'What did Jo bake on 2 June, 2022?', limits: { observations: 1 } })
    expect(r.observations[0]!.slug).toBe(early.slug)
  })

  it('lifts a note written the same day as the best hit over one of another day that shares as few words', async () => {
    const f = await fixture()
    // set apart from the feedback pass, which lifts notes like the best hit too
    engineOf(f.memory).recallTuning = { ...DEFAULT_TUNING, feedbackShare: 0 }
    await f.conn.write({ title: 'Pottery', content: 'Jo went to a pottery class.', observedAt: '2023-03-01T10:00:00.000Z', entities: [jo] })
    const sameDay = await f.conn.write({ title: 'Teacher', content: 'She loved the teacher there.', observedAt: '2023-03-01T11:00:00.000Z', entities: [jo] })
    const later = await f.conn.write({ title: 'Song', content: 'She loved the new song.', observedAt: '2023-03-20T10:00:00.000Z', entities: [jo] })
    const slugs = (await f.conn.recall({ query: 'pottery class', limits: { observations: 3 } })).observations.map((o) => o.slug)
    expect(slugs.indexOf(sameDay.slug)).toBeGreaterThanOrEqual(0)
    expect(slugs.indexOf(sameDay.slug)).toBeLessThan(slugs.indexOf(later.slug))
  })

  it('after an event, lifts the notes that follow it over those before it', async () => {
    const f = await fixture()
    const before = await f.conn.write({ title: 'Mood one', content: 'Jo felt calm.', observedAt: '2023-03-01T10:00:00.000Z', entities: [jo] })
    await f.conn.write({ title: 'Race', content: 'Jo ran the charity race.', observedAt: '2023-03-10T10:00:00.000Z', entities: [jo] })
    const after = await f.conn.write({ title: 'Mood two', content: 'Jo felt proud.', observedAt: '2023-03-12T10:00:00.000Z', entities: [jo] })
    const newest = await f.conn.write({ title: 'Mood three', content: 'Jo felt tired.', observedAt: '2023-06-12T10:00:00.000Z', entities: [jo] })
    const slugs = (await f.conn.recall({ query: 'How did Jo feel after the charity race?', limits: { observations: 4 } })).observations.map((o) => o.slug)
    expect(slugs.indexOf(after.slug)).toBeLessThan(slugs.indexOf(newest.slug))
    expect(slugs.indexOf(after.slug)).toBeLessThan(slugs.indexOf(before.slug))
  })

  it('feedback: lifts a note like the best hit over one that shares no more of the query and is about something else', async () => {
    const f = await fixture({ embedder: await defaultEmbedder() })
    // the session lift is set apart: all three notes are of different days anyway
    engineOf(f.memory).recallTuning = { ...DEFAULT_TUNING, sessionShare: 0 }
    await f.conn.write({ title: 'Pottery', content: 'Jo went to a pottery class and shaped clay bowls on the wheel.', observedAt: '2023-03-01T10:00:00.000Z', entities: [jo] })
    const alike = await f.conn.write({ title: 'Kiln', content: 'The bowls came out of the kiln glazed and shiny.', observedAt: '2023-03-05T10:00:00.000Z', entities: [jo] })
    const other = await f.conn.write({ title: 'Sketches', content: 'The sketches she drew at school were put up on the wall.', observedAt: '2023-03-20T10:00:00.000Z', entities: [jo] })
    const slugs = (await f.conn.recall({ query: 'What did Jo make at her pottery class?', limits: { observations: 3 } })).observations.map((o) => o.slug)
    expect(slugs.indexOf(alike.slug)).toBeGreaterThanOrEqual(0)
    expect(slugs.indexOf(alike.slug)).toBeLessThan(slugs.indexOf(other.slug))
  }, 30_000)

  /**
   * One day of a conversation, written in this order: a remark, a question and its reply. By
   * slug, 'cold-day' sorts before 'the-bowl': without a reply lift the remark comes first.
   */
  async function potteryDay(conn: Awaited<ReturnType<typeof fixture>>['conn']): Promise<{ before: { slug: string }; reply: { slug: string } }> {
    const at = '2023-03-01T10:00:00.000Z'
    const before = await conn.write({ title: 'Cold day', content: 'Jo: It was cold and grey outside.', observedAt: at, entities: [jo] })
    await pause()
    await conn.write({ title: 'Question', content: 'Sam: What did you make at the pottery class, Jo?', observedAt: at, entities: [jo] })
    await pause()
    const reply = await conn.write({ title: 'The bowl', content: 'Jo: A blue bowl with a lid!', observedAt: at, entities: [jo] })
    return { before, reply }
  }

  it('lifts the note written right after the best hit (its reply) over another of the same day, before and after a reopen', async () => {
    const f = await fixture()
    const { before, reply } = await potteryDay(f.conn)
    const asked = { query: 'What did Jo make at the pottery class?', limits: { observations: 3 } }
    const slugs = (await f.conn.recall(asked)).observations.map((o) => o.slug)
    expect(slugs.indexOf(reply.slug)).toBeGreaterThanOrEqual(0)
    expect(slugs.indexOf(reply.slug)).toBeLessThan(slugs.indexOf(before.slug))
    // reopened, the notes' texts still in storage: those of the best hit's day are read
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    expect((await c.recall(asked)).observations.map((o) => o.slug)).toEqual(slugs)
    await reopened.close()
  })

  it('lends no reply for a question that asks when: its answer is the note of the event', async () => {
    const f = await fixture()
    const { before, reply } = await potteryDay(f.conn)
    const slugs = (await f.conn.recall({ query: 'When did Sam ask Jo about the pottery class?', limits: { observations: 3 } })).observations.map((o) => o.slug)
    // with no reply lifted, the two notes holding none of the words keep their order by slug
    expect(slugs.indexOf(before.slug)).toBeGreaterThanOrEqual(0)
    expect(slugs.indexOf(before.slug)).toBeLessThan(slugs.indexOf(reply.slug))
  })

  it('a note holding the query\'s words comes back though the entity it names is not among those recalled', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'Glaze', content: 'Jo chose a blue glaze.', observedAt: '2023-03-01T10:00:00.000Z', entities: [{ name: 'Jo', type: 'person', description: 'a potter who glazes blue pottery bowls' }] })
    const direct = await f.conn.write({ title: 'Bowls', content: 'Sam sold blue pottery bowls at the market.', observedAt: '2023-03-02T10:00:00.000Z', entities: [{ name: 'Sam', type: 'person', description: 'a neighbour' }] })
    const r = await f.conn.recall({ query: 'blue pottery bowls', limits: { entities: 1 } })
    expect(r.entities.map((e) => e.name)).toEqual(['Jo'])
    expect(r.observations.map((o) => o.slug)).toContain(direct.slug)
  })
})
