import { describe, expect, it } from 'vitest'
import { IDBKeyRange } from 'fake-indexeddb'
import { MAX_FILE_BYTES, openMemory } from '../../src/index'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { relationshipKey } from '../../src/core/normalize'
import { MemoryDB } from '../../src/store/db'
import { ada, engine, fixture, society, type Fixture } from './fixture'
import { engineOf, ownerOf } from '../../src/internals'
import { GRAPH_SNAPSHOT_KEY, NAME_BLOCKS_KEY } from '../../src/engine/memory-engine'
import { INDEX_SNAPSHOT_FORMAT } from '../../src/search/entity-index'
import { importMcpMemory } from '../../src/interop/import'
import { NOTE_INDEX_FORMAT } from '../../src/search/note-index'

describe('appendix files', () => {
  it('stores, lists and reads files with their hash; refuses bad paths, duplicates and oversize', async () => {
    const { conn } = await fixture()
    const data = new TextEncoder().encode('the source document')
    const rec = await conn.storeFile({ path: 'sources/notes.txt', filename: 'notes.txt', type: 'text/plain', data, description: 'the notes' })
    expect(rec.size).toBe(data.length)
    expect(rec.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect((await conn.listFiles()).map((f) => f.path)).toEqual(['sources/notes.txt'])
    const read = await conn.readFile('sources/notes.txt')
    expect(new TextDecoder().decode(read.data)).toBe('the source document')
    await expect(conn.storeFile({ path: '../etc/passwd', data: 'x' })).rejects.toMatchObject({ code: 'invalid_write' })
    await expect(conn.storeFile({ path: 'sources/notes.txt', data: 'x' })).rejects.toMatchObject({ code: 'conflict' })
    await expect(conn.storeFile({ path: 'big.bin', data: new Uint8Array(MAX_FILE_BYTES + 1) })).rejects.toMatchObject({ code: 'too_large' })
    await expect(conn.readFile('missing')).rejects.toMatchObject({ code: 'not_found' })
    const w = await conn.write({ title: 't', content: 'see appendix', files: ['sources/notes.txt', 'sources/missing.pdf'] })
    expect(w.warnings.map((x) => x.code)).toEqual(['unknown_file', 'no_entity'])
  })
})

describe('reopen', () => {
  it('reopening yields the graph a re-derivation from observations gives, with or without a saved index', async () => {
    const f = await fixture()
    const { slug } = await f.conn.write({ title: 'a', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    await f.conn.write({ title: 'b', content: 'c', entities: [{ ...ada, description: 'Countess and mathematician' }] })
    await f.conn.update(slug, { removeEntities: ['analytical engine'] })
    const expected = graphFingerprint(engineOf(f.memory).committedGraph)
    // no saveIndex: the next open must rebuild the index rather than trust a stale one
    const reopened = await f.reopen()
    expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(expected)
    const fresh = Graph.derive(engineOf(reopened).committedGraph.allObservations(), engineOf(reopened).committedGraph.aliasMap())
    expect(graphFingerprint(fresh)).toBe(expected)
    const c = await reopened.connect({ agent: 'x' })
    expect((await c.recall({ query: 'countess' })).entities[0]!.name).toBe('Ada Lovelace')
    await reopened.close()
    const third = await openMemory(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    const c3 = await third.connect({ agent: 'y' })
    expect((await c3.recall({ query: 'countess' })).entities[0]!.name).toBe('Ada Lovelace')
  })

  it('an unreadable saved index is rebuilt instead of failing the open', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'a', content: 'c', entities: [ada] })
    await f.memory.close()
    const db = engineOf(await f.reopen()).db
    const version = (await db.meta.get('version'))!.value
    await db.meta.put({ key: 'entityIndex', value: { version, snapshot: { format: 'something else', docs: 42 } } })
    const again = await f.reopen()
    const c = await again.connect({ agent: 'x' })
    expect((await c.recall({ query: 'mathematician' })).entities[0]!.name).toBe('Ada Lovelace')
  })

  it('saved indexes of an earlier format are rebuilt on open, and saved again in the current one', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'Ada', content: 'Ada wrote the first program.', entities: [ada] })
    await f.memory.close()
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    const formats = async () => Promise.all(['entityIndex', 'noteIndex'].map(async (key) => ((await db.meta.get(key))!.value as { snapshot: { format: string } }).snapshot.format))
    const current = await formats()
    expect(current).toEqual([INDEX_SNAPSHOT_FORMAT, NOTE_INDEX_FORMAT])
    for (const [key, format] of [['entityIndex', 'cairn-entity-index@3'], ['noteIndex', 'cairn-note-index@3']] as const) {
      const row = (await db.meta.get(key))!.value as { snapshot: Record<string, unknown> }
      await db.meta.put({ key, value: { ...row, snapshot: { ...row.snapshot, format } } })
    }
    const again = await f.reopen()
    const c = await again.connect({ agent: 'x' })
    expect((await c.recall({ query: 'mathematician' })).entities[0]!.name).toBe('Ada Lovelace')
    expect((await c.recall({ query: 'first program' })).observations.map((o) => o.title)).toContain('Ada')
    await again.close()
    expect(await formats()).toEqual(current)
    db.close()
  })

  it('a saved index older than the graph (another tab saved it, or a write came after it) is brought up to date on open', async () => {
    const f = await fixture()
    const { slug } = await f.conn.write({ title: 'a', content: 'c', entities: [ada, engine] })
    await f.memory.close()
    const first = await f.reopen()
    const stale = (await engineOf(first).db.meta.get('entityIndex'))!.value as { version: number }
    const c1 = await first.connect({ agent: 'w', tier: 'full' })
    await c1.write({ title: 'b', content: 'c', entities: [society] })
    await c1.update(slug, { removeEntities: ['analytical engine'] })
    await c1.write({ title: 'c', content: 'c', entities: [{ ...ada, description: 'Countess and mathematician' }] })
    await first.close()
    // the older snapshot, labelled as current, as a second tab that saved late would leave it
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    const version = (await db.meta.get('version'))!.value
    await db.meta.put({ key: 'entityIndex', value: { ...stale, version } })
    db.close()
    const again = await f.reopen()
    const c = await again.connect({ agent: 'x' })
    expect((await c.recall({ query: 'learned society london' })).entities[0]?.name).toBe('Royal Society')
    expect((await c.recall({ query: 'countess' })).entities[0]?.name).toBe('Ada Lovelace')
    expect((await c.recall({ query: 'mechanical general-purpose computer' })).entities.map((e) => e.name)).not.toContain('Analytical Engine')
    await again.close()
  })

  it('unknown memory ids are not_found', async () => {
    const f = await fixture()
    await expect(openMemory('nope', { indexedDB: f.factory, IDBKeyRange })).rejects.toMatchObject({ code: 'not_found' })
  })
})

describe('open from the saved state', () => {
  const stepsOf = (m: Awaited<ReturnType<Fixture['reopen']>>) => Object.keys(engineOf(m).openSteps)

  it('takes the observations and graph saved with the index, and trusts the index saved with them', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'a', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    const expected = graphFingerprint(engineOf(f.memory).committedGraph)
    await f.memory.close()
    const reopened = await f.reopen()
    const steps = stepsOf(reopened)
    expect(steps).toContain('graph')
    expect(steps).not.toContain('derive')
    // saved in one write with the state: no document-by-document check
    expect(steps).not.toContain('note catch-up')
    expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(expected)
    expect(engineOf(reopened).getObservation((await (await reopened.connect({ agent: 'x' })).recall({ query: 'mathematician' })).observations[0]!.slug).content).toBe('c')
    await reopened.close()
  })

  it('derives from the rows when commits came after the save, and when the saved state is unreadable', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'a', content: 'c', entities: [ada] })
    await f.memory.close()
    const first = await f.reopen()
    const c1 = await first.connect({ agent: 'w', tier: 'full' })
    await c1.write({ title: 'b', content: 'c', entities: [society] })
    const expected = graphFingerprint(engineOf(first).committedGraph)
    // closed without saving, as a tab that goes away at once
    engineOf(first).close()
    const behind = await f.reopen()
    expect(stepsOf(behind)).toContain('derive')
    expect(stepsOf(behind)).toContain('note catch-up')
    expect(graphFingerprint(engineOf(behind).committedGraph)).toBe(expected)
    expect((await (await behind.connect({ agent: 'x' })).recall({ query: 'learned society london' })).entities[0]?.name).toBe('Royal Society')
    await behind.close()
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    const state = (await db.meta.get('derivedGraph'))!.value as Record<string, unknown>
    await db.meta.put({ key: 'derivedGraph', value: { ...state, graph: { ...(state.graph as object), edgeSources: [1] } } })
    db.close()
    const again = await f.reopen()
    expect(stepsOf(again)).toContain('derive')
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(expected)
  })

  it('names every step of the open, and a write right after it still finds the possible duplicates', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'a', content: 'c', entities: [ada, engine] })
    await f.memory.close()
    const reopened = await f.reopen()
    expect(stepsOf(reopened)).toEqual(expect.arrayContaining(['registry', 'database', 'read', 'graph', 'entity index', 'note index', 'engine']))
    // written before the names were filed in the background (no task has run since the open):
    // the write finds them through the blocks saved with the state
    const w = await engineOf(reopened).write({ title: 'b', content: 'c', entities: [{ name: 'Dr. Ada Lovelace', type: 'person', description: 'the same person' }] }, 'w')
    expect(w.possibleDuplicates).toEqual([expect.objectContaining({ name: 'Dr. Ada Lovelace', existing: 'Ada Lovelace' })])
    await reopened.close()
    // the blocks are a row of their own, of the same save as the graph's row, read only by such a write
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    const graphRow = (await db.meta.get(GRAPH_SNAPSHOT_KEY))?.value as { saveId: string }
    const names = (await db.meta.get(NAME_BLOCKS_KEY))?.value as { saveId: string; blocks: Float64Array }
    db.close()
    expect(names.saveId).toBe(graphRow.saveId)
    expect(names.blocks.length).toBeGreaterThan(0)
  })

  it('a recall right after the open, before the notes are filed, lends each matching note its entities as one after', async () => {
    const f = await fixture()
    // the note matches the query; its second entity is reached only through the note
    await f.conn.write({ title: 'Ada', content: 'Ada worked on the Engine.', entities: [ada, engine] })
    await f.memory.close()
    const reopened = await f.reopen()
    // called before any task has run, so the background filing waits for it
    const early = await engineOf(reopened).recall({ query: 'Ada Lovelace' })
    await new Promise((r) => setTimeout(r, 50))
    const late = await engineOf(reopened).recall({ query: 'Ada Lovelace' })
    expect(early.entities.map((e) => e.name)).toContain('Analytical Engine')
    expect(early).toEqual(late)
    await reopened.close()
  })

  it('closing an open that took its indexes as saved writes nothing again', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'a', content: 'c', entities: [ada] })
    await f.memory.close()
    const savedId = async () => {
      const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
      const row = (await db.meta.get('derivedGraph'))?.value as { saveId?: string } | undefined
      db.close()
      return row?.saveId
    }
    const before = await savedId()
    expect(before).toBeTypeOf('string')
    await (await f.reopen()).close()
    expect(await savedId()).toBe(before)
    // a commit after the open is saved at close as before
    const again = await f.reopen()
    await (await again.connect({ agent: 'w' })).write({ title: 'b', content: 'c', entities: [society] })
    await again.close()
    expect(await savedId()).not.toBe(before)
  })
})

describe('the notes\' texts after an open', () => {
  const filled = async (n: number) => {
    const f = await fixture()
    for (let i = 0; i < n; i++) {
      await f.conn.write({ title: `n${i}`, content: `note ${i} on the ${i % 3 ? 'engine' : 'society'}`, entities: [i % 2 ? ada : engine, { ...society, description: `society ${i % 7}` }], relationships: [{ source: i % 2 ? ada.name : engine.name, type: 'member_of', target: society.name }] })
    }
    const expected = [...engineOf(f.memory).committedGraph.allObservations()]
    await f.memory.saveIndex()
    await f.memory.close()
    return { f, expected }
  }
  const texts = async (f: Fixture, change: (db: MemoryDB) => Promise<unknown>) => {
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    await change(db)
    db.close()
  }

  it('opens without them, and answers recalls and reads from the notes they need until all are in', async () => {
    const f = await fixture()
    // each note has a word and an entity of its own; Ada backs every other note
    const word = (i: number) => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`
    for (let i = 0; i < 40; i++) {
      await f.conn.write({ title: `n${i}`, content: `a note about ${word(i)}`, entities: [{ name: `Item ${word(i)}`, type: 'thing', description: `the ${word(i)} item` }, ...(i % 2 ? [] : [ada])] })
    }
    const expected = [...engineOf(f.memory).committedGraph.allObservations()].sort((a, b) => a.slug.localeCompare(b.slug))
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    expect(opened.committedGraph.notesInStorage).toBe(40)
    // asked before any task has run: the texts are read after a pause in recalls, so this one reads its own
    const early = await opened.recall({ query: word(7) })
    expect(early.entities.map((e) => e.name)).toEqual([`Item ${word(7)}`])
    expect(early.observations.map((o) => o.title)).toEqual(['n7'])
    expect(opened.committedGraph.notesInStorage).toBe(39)
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    expect(await c.getObservation(expected[5]!.slug)).toEqual(expected[5])
    expect((await c.inspect(ada.name)).observations).toHaveLength(20)
    await ownerOf(reopened).notesHeld()
    expect(opened.committedGraph.notesInStorage).toBe(0)
    expect([...opened.committedGraph.allObservations()].sort((a, b) => a.slug.localeCompare(b.slug))).toEqual(expected)
    expect(await c.recall({ query: word(7) })).toEqual(early)
    await reopened.close()
  })

  it('ranks a hub\'s notes by their saved times and reads only the texts it shows', async () => {
    const f = await fixture()
    // Ada backs all 30 notes, observed on 30 days in shuffled order: the newest come first
    for (let i = 0; i < 30; i++) {
      const day = (i * 7) % 30
      await f.conn.write({ title: `d${day}`, content: `day ${day} with Ada`, observedAt: new Date(Date.UTC(2025, 0, 1 + day)).toISOString(), entities: [ada] })
    }
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    expect(opened.committedGraph.notesInStorage).toBe(30)
    // what the recall reads from the observation rows (a private field, wrapped to watch it)
    const reads: string[][] = []
    const held = (opened as unknown as { c: { loader: { source: { some(slugs: string[]): Promise<unknown> } } } }).c.loader
    const some = held.source.some.bind(held.source)
    held.source = { ...held.source, some: (slugs: string[]) => (reads.push(slugs), some(slugs)) }
    const asked = { query: 'Ada', limits: { observations: 4 } }
    const early = await opened.recall(asked)
    expect(early.observations.map((o) => o.title)).toEqual(['d29', 'd28', 'd27', 'd26'])
    // the other 26 were ranked by time alone, and the 4 shown read at once
    expect(opened.committedGraph.notesInStorage).toBe(26)
    expect(reads.map((slugs) => slugs.length)).toEqual([4])
    await ownerOf(reopened).notesHeld()
    expect(await opened.recall(asked)).toEqual(early)
    await reopened.close()
  })

  it('ranks again when a change commits while the shown notes are read', async () => {
    const f = await fixture()
    for (let day = 0; day < 8; day++) {
      await f.conn.write({ title: `d${day}`, content: `day ${day} with Ada`, observedAt: new Date(Date.UTC(2025, 0, 1 + day)).toISOString(), entities: [ada] })
    }
    const newest = [...engineOf(f.memory).committedGraph.allObservations()].find((o) => o.title === 'd7')!.slug
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    // the newest note, about to be shown, is deleted while the recall reads the texts it shows
    const held = (opened as unknown as { c: { loader: { source: { some(slugs: string[]): Promise<unknown> } } } }).c.loader
    const some = held.source.some.bind(held.source)
    let deleted = false
    held.source = { ...held.source, some: async (slugs: string[]) => {
      const rows = await some(slugs)
      if (!deleted) {
        deleted = true
        await c.delete(newest)
      }
      return rows
    } }
    const result = await opened.recall({ query: 'Ada', limits: { observations: 3 } })
    expect(deleted).toBe(true)
    expect(result.observations.map((o) => o.title)).toEqual(['d6', 'd5', 'd4'])
    await reopened.close()
  })

  it('a change right after the open reads only the notes it touches, and leaves the graph a derivation gives', async () => {
    const f = await fixture()
    for (let i = 0; i < 24; i++) {
      await f.conn.write({ title: `n${i}`, content: `note ${i}`, entities: [i % 2 ? ada : engine, { ...society, description: `society ${i % 7}` }], relationships: [{ source: i % 2 ? ada.name : engine.name, type: 'member_of', target: society.name }] })
    }
    // named without a description, and the note that described it deleted: neither it nor the
    // edge to it is live, and the save keeps them as waiting
    const { slug: described } = await f.conn.write({ title: 'who', content: 'who', entities: [{ name: 'Menabrea', type: 'person', description: 'Italian engineer' }] })
    await f.conn.write({ title: 'letter', content: 'a letter', entities: [ada, { name: 'Menabrea', type: 'person', description: '' }], relationships: [{ source: ada.name, type: 'wrote_to', target: 'Menabrea' }] })
    await f.conn.delete(described)
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    const graph = engineOf(reopened).committedGraph
    const stored = graph.notesInStorage
    expect(stored).toBe(25)
    // describing Menabrea brings it and the waiting edge to life
    const { slug } = await c.write({ title: 'late', content: 'late note', entities: [{ name: 'Menabrea', type: 'person', description: 'Italian engineer' }] })
    expect(graph.relationships.has(relationshipKey('ada lovelace', 'wrote_to', 'menabrea'))).toBe(true)
    // it read the note naming Menabrea and those of the edges touching Ada, not the engine's
    expect(graph.notesInStorage).toBeGreaterThan(0)
    expect(graph.notesInStorage).toBeLessThan(stored)
    const derived = () => Graph.derive(graph.allObservations(), graph.aliasMap())
    await c.delete(slug)
    expect(graph.relationships.has(relationshipKey('ada lovelace', 'wrote_to', 'menabrea'))).toBe(false)
    expect(graph.notesInStorage).toBeGreaterThan(0)
    // the rest comes in afterwards, and the graph is the one a derivation gives
    await ownerOf(reopened).notesHeld()
    expect(graphFingerprint(graph)).toBe(graphFingerprint(derived()))
    // saved again while only partly filed, then opened, and changed again
    await reopened.saveIndex()
    await reopened.close()
    const third = await f.reopen()
    const c3 = await third.connect({ agent: 'x', tier: 'full' })
    await c3.write({ title: 'again', content: 'again', entities: [{ name: 'Menabrea', type: 'person', description: 'Italian engineer' }] })
    const g3 = engineOf(third).committedGraph
    expect(g3.relationships.has(relationshipKey('ada lovelace', 'wrote_to', 'menabrea'))).toBe(true)
    await ownerOf(third).notesHeld()
    expect(graphFingerprint(g3)).toBe(graphFingerprint(Graph.derive(g3.allObservations(), g3.aliasMap())))
    await third.close()
  })

  it('a change that needs many of them reads all the texts at once, not row by row', async () => {
    const f = await fixture()
    for (let i = 0; i < 210; i++) await f.conn.write({ title: `n${i}`, content: `note ${i}`, entities: [ada] })
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    const held = (opened as unknown as { c: { loader: { source: { some(slugs: string[]): Promise<unknown> } } } }).c.loader
    const some = held.source.some.bind(held.source)
    const asked: number[] = []
    held.source = { ...held.source, some: async (slugs: string[]) => (asked.push(slugs.length), some(slugs)) }
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    await c.write({ title: 'late', content: 'late note', entities: [{ ...ada, description: 'Countess of Lovelace' }] })
    // all 210 back Ada: past the share read row by row
    expect(asked.every((n) => n < 200)).toBe(true)
    const graph = opened.committedGraph
    expect(graph.notesInStorage).toBe(0)
    expect(graphFingerprint(graph)).toBe(graphFingerprint(Graph.derive(graph.allObservations(), graph.aliasMap())))
    await reopened.close()
  })

  it('reads them from the observation rows when their row is of another save, or gone', async () => {
    const { f, expected } = await filled(12)
    await texts(f, async (db) => {
      const row = (await db.meta.get('derivedGraphTexts:0'))!.value as Record<string, unknown>
      await db.meta.put({ key: 'derivedGraphTexts:0', value: { ...row, saveId: 'another save' } })
    })
    const other = await f.reopen()
    await ownerOf(other).notesHeld()
    expect([...engineOf(other).committedGraph.allObservations()]).toHaveLength(expected.length)
    engineOf(other).close()
    await texts(f, (db) => db.meta.delete('derivedGraphTexts:0'))
    const gone = await f.reopen()
    await ownerOf(gone).notesHeld()
    expect([...engineOf(gone).committedGraph.allObservations()].map((o) => o.content).sort()).toEqual(expected.map((o) => o.content).sort())
    await gone.close()
  })

  it('a note missing from storage fails what needs it with storage_failed, and changes nothing', async () => {
    const { f, expected } = await filled(6)
    const [lost, kept] = [expected[3]!, expected[2]!]
    await texts(f, (db) => Promise.all([db.meta.delete('derivedGraphTexts:0'), db.observations.delete(lost.slug)]))
    const reopened = await f.reopen()
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    await expect(ownerOf(reopened).notesHeld()).rejects.toMatchObject({ code: 'storage_failed' })
    await expect(c.write({ title: 'w', content: 'c', entities: [ada] })).rejects.toMatchObject({ code: 'storage_failed' })
    await expect(c.getObservation(lost.slug)).rejects.toMatchObject({ code: 'storage_failed' })
    // the other notes still read
    expect(await c.getObservation(kept.slug)).toEqual(kept)
    expect(await new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange }).observations.count()).toBe(5)
    engineOf(reopened).close()
  })
})

describe('filing after an open', () => {
  it('files in the background what an open from the saved state left for later, and changes after it match a derivation', async () => {
    const f = await fixture()
    for (let i = 0; i < 120; i++) {
      await f.conn.write({ title: `n${i}`, content: `note ${i}`, entities: [i % 2 ? ada : engine, { ...society, description: `society ${i % 7}` }], relationships: [{ source: i % 2 ? ada.name : engine.name, type: 'member_of', target: society.name }] })
    }
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    // nothing has been filed yet: the open only read the saved rows
    expect(opened.filedAt).toBeUndefined()
    for (let waited = 0; opened.filedAt === undefined && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(opened.filedAt).toBeTypeOf('number')
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    await c.write({ title: 'late', content: 'late note', entities: [{ ...ada, description: 'Countess' }] })
    const graph = opened.committedGraph
    expect(graphFingerprint(graph)).toBe(graphFingerprint(Graph.derive(graph.allObservations(), graph.aliasMap())))
    await reopened.close()
  })

  it('gives way to a write under way: nothing is filed while a write waits on storage, and filing ends once it is done', async () => {
    const f = await fixture()
    const members = Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ type: 'entity', name: `Member ${i}`, entityType: 'person', observations: [`Member ${i} joined the society in ${1800 + (i % 90)}`] }))
    await importMcpMemory(f.memory, members.join('\n'))
    await f.memory.saveIndex()
    await f.memory.close()
    const reopened = await f.reopen()
    const opened = engineOf(reopened)
    const c = await reopened.connect({ agent: 'x', tier: 'full' })
    const graph = opened.committedGraph
    let slices = 0
    const fileSome = graph.fileSome.bind(graph)
    graph.fileSome = (count: number) => {
      slices++
      return fileSome(count)
    }
    // every note read in, so that filing runs on the graph alone; a recall holds it off for a
    // moment, and the write follows at once
    await ownerOf(reopened).notesHeld()
    await c.recall({ query: 'member 7' })
    // another connection to the database holds a store every commit writes (and filing never
    // reads), so the write waits on storage
    const holder = new MemoryDB(reopened.info.id, { indexedDB: f.factory, IDBKeyRange })
    let releaseStore = false
    let storeHeld!: () => void
    const held = new Promise<void>((resolve) => (storeHeld = resolve))
    const holding = holder.transaction('rw', holder.unmirrored, async () => {
      storeHeld()
      while (!releaseStore) await holder.unmirrored.get('no such change')
    })
    await held
    // counted from the moment the write works out its change, so inside the write queue
    let underWay!: () => void
    const writeUnderWay = new Promise<void>((resolve) => (underWay = resolve))
    const preview = graph.preview.bind(graph)
    graph.preview = (...args: Parameters<typeof preview>) => {
      underWay()
      return preview(...args)
    }
    const write = c.write({ title: 'during filing', content: 'Written while the open still files.', entities: [ada] })
    await writeUnderWay
    expect(opened.filedAt).toBeUndefined()
    slices = 0
    // far past the pause filing waits for after a recall or a change
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(slices).toBe(0)
    releaseStore = true
    await holding
    await write
    for (let waited = 0; opened.filedAt === undefined && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(opened.filedAt).toBeTypeOf('number')
    expect(slices).toBeGreaterThan(0)
    const after = opened.committedGraph
    expect(graphFingerprint(after)).toBe(graphFingerprint(Graph.derive(after.allObservations(), after.aliasMap())))
    holder.close()
    await reopened.close()
  })
})
