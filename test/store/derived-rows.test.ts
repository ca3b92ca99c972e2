// Derived rows keep their backing notes in tables of their own: a memory stored the older way
// (every note slug listed in the entity's row) is split in place when it is next opened.
import Dexie from 'dexie'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { DERIVATION_RULES, Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { createMemory, openMemory } from '../../src/index'
import { readDerived } from '../helpers/read-derived'
import { ada, engine, society } from '../engine/fixture'
import { engineOf } from '../../src/internals'

const byKey = <T extends { key: string }>(rows: T[]) => [...rows].sort((a, b) => (a.key < b.key ? -1 : 1))

describe('backing notes stored apart from the rows', () => {
  it('a memory stored with backing inside its rows is split on open, losing nothing, and takes writes after', async () => {
    const factory = new IDBFactory()
    const deps = { indexedDB: factory, IDBKeyRange }
    const memory = await createMemory({ name: 'older layout', ...deps })
    const conn = await memory.connect({ agent: 'owner', tier: 'full' })
    await conn.write({ title: 'Ada and the engine', content: 'Ada wrote about the engine.', entities: [ada, engine], relationships: [{ source: ada.name, type: 'wrote_about', target: engine.name }] })
    await conn.write({ title: 'Ada at the Society', content: 'Ada visited the Society.', entities: [ada, society], relationships: [{ source: ada.name, type: 'visited', target: society.name }] })
    // an edge whose far end no note describes: stated, dormant, with no row
    await conn.write({ title: 'Babbage', content: 'Ada knew Babbage.', entities: [ada], relationships: [] })
    const id = memory.info.id
    const observations = await engineOf(memory).db.observations.toArray()
    const meta = await engineOf(memory).db.meta.toArray()
    await memory.close()

    // the same memory as the previous layout (schema version 3) stored it
    const name = `cairn-memory-${id}`
    await new Dexie(name, deps).delete()
    const old = new Dexie(name, deps)
    old.version(1).stores({ meta: 'key', connections: 'id, tokenHash, agent', observations: 'slug, category, observedAt, *tags', entities: 'key, type', relationships: 'key, source, target', aliases: 'variant, canonical', proposals: 'id, status', files: 'path', fileBytes: 'path' })
    old.version(2).stores({ docUpdates: '++seq' })
    old.version(3).stores({ unmirrored: 'key' })
    const derived = Graph.derive(observations)
    await old.table('meta').bulkPut(meta)
    await old.table('observations').bulkPut(observations)
    await old.table('entities').bulkPut([...derived.entities.values()])
    await old.table('relationships').bulkPut([...derived.relationships.values()])
    old.close()
    expect(meta.find((m) => m.key === 'derivationRules')?.value).toBe(DERIVATION_RULES)

    const reopened = await openMemory(id, deps)
    try {
      const db = engineOf(reopened).db
      expect((await db.entities.toArray()).some((e) => 'observations' in e)).toBe(false)
      expect((await db.relationships.toArray()).some((r) => 'observations' in r)).toBe(false)
      expect(await db.entityNotes.where('[key+slug]').between(['ada lovelace', Dexie.minKey], ['ada lovelace', Dexie.maxKey]).count()).toBe(3)
      const stored = await readDerived(db)
      expect(JSON.stringify(byKey(stored.entities))).toBe(JSON.stringify(byKey([...derived.entities.values()])))
      expect(JSON.stringify(byKey(stored.relationships))).toBe(JSON.stringify(byKey([...derived.relationships.values()])))
      expect(await db.observations.count()).toBe(3)
      expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(graphFingerprint(derived))

      // later writes keep the split rows exact
      const next = await reopened.connect({ agent: 'owner', tier: 'full' })
      const { slug } = await next.write({ title: 'Ada again', content: 'More on Ada.', entities: [ada] })
      await next.delete(observations[0]!.slug)
      const after = await readDerived(db)
      const fresh = Graph.derive(await db.observations.toArray())
      expect(JSON.stringify(byKey(after.entities))).toBe(JSON.stringify(byKey([...fresh.entities.values()])))
      expect(JSON.stringify(byKey(after.relationships))).toBe(JSON.stringify(byKey([...fresh.relationships.values()])))
      expect(after.entities.find((e) => e.key === 'ada lovelace')!.observations).toContain(slug)
    } finally {
      await reopened.close()
    }
  })

  it('a write to an entity named in many notes stores one backing pair, not the list', async () => {
    const memory = await createMemory({ name: 'hub', indexedDB: new IDBFactory(), IDBKeyRange })
    const conn = await memory.connect({ agent: 'owner', tier: 'full' })
    try {
      for (let i = 0; i < 30; i++) await conn.write({ title: `note ${i}`, content: `Sam noted ${i}.`, entities: [{ name: 'Sam', type: 'person', description: 'the owner' }] })
      const db = engineOf(memory).db
      const puts: unknown[] = []
      const original = db.entityNotes.bulkPut.bind(db.entityNotes)
      db.entityNotes.bulkPut = ((rows: unknown[]) => (puts.push(...rows), original(rows as never))) as never
      const rowPuts: unknown[] = []
      const originalRows = db.entities.bulkPut.bind(db.entities)
      db.entities.bulkPut = ((rows: unknown[]) => (rowPuts.push(...rows), originalRows(rows as never))) as never
      const { slug } = await conn.write({ title: 'note 30', content: 'Sam noted 30.', entities: [{ name: 'Sam', type: 'person', description: 'the owner' }] })
      expect(puts).toEqual([{ key: 'sam', slug }])
      expect(rowPuts).toHaveLength(1)
      expect(rowPuts[0]).not.toHaveProperty('observations')
      expect(await db.entityNotes.count()).toBe(31)
    } finally {
      await memory.close()
    }
  })
})

describe('opening from the saved graph', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  async function filled() {
    const deps = { indexedDB: new IDBFactory(), IDBKeyRange }
    const memory = await createMemory({ name: 'rows', ...deps })
    const conn = await memory.connect({ agent: 'owner', tier: 'full' })
    await conn.write({ title: 'Ada and the engine', content: 'Ada wrote about the engine.', entities: [ada, engine], relationships: [{ source: ada.name, type: 'wrote_about', target: engine.name }] })
    await conn.write({ title: 'Ada at the Society', content: 'Ada visited the Society.', entities: [ada, society], relationships: [{ source: ada.name, type: 'visited', target: society.name }] })
    const fingerprint = graphFingerprint(engineOf(memory).committedGraph)
    await memory.close()
    return { id: memory.info.id, deps, fingerprint }
  }

  it('takes the graph saved at the current version under the same rules instead of deriving it, and writes after that keep the rows exact', async () => {
    const { id, deps, fingerprint } = await filled()
    const derive = vi.spyOn(Graph, 'derive')
    const reopened = await openMemory(id, deps)
    try {
      expect(derive).not.toHaveBeenCalled()
      expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(fingerprint)
      const conn = await reopened.connect({ agent: 'owner', tier: 'full' })
      expect((await conn.recall({ query: 'learned society' })).entities.map((e) => e.name)).toContain('Royal Society')
      // a change before the background filing is done files the rest first
      await conn.write({ title: 'Ada and Babbage', content: 'Ada met Babbage.', entities: [ada, { name: 'Charles Babbage', type: 'person', description: 'Designer of the engine' }], relationships: [{ source: ada.name, type: 'met', target: 'Charles Babbage' }] })
      const db = engineOf(reopened).db
      const stored = await readDerived(db)
      const fresh = Graph.derive(await db.observations.toArray())
      expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(graphFingerprint(fresh))
      expect(JSON.stringify(byKey(stored.entities))).toBe(JSON.stringify(byKey([...fresh.entities.values()])))
      expect(JSON.stringify(byKey(stored.relationships))).toBe(JSON.stringify(byKey([...fresh.relationships.values()])))
    } finally {
      await reopened.close()
    }
  })

  it('derives when commits came after the saved graph', async () => {
    const { id, deps, fingerprint } = await filled()
    const first = await openMemory(id, deps)
    // another tab committed and closed before saving
    await engineOf(first).db.meta.put({ key: 'version', value: 99 })
    await first.close()
    const derive = vi.spyOn(Graph, 'derive')
    const reopened = await openMemory(id, deps)
    try {
      expect(derive).toHaveBeenCalledTimes(1)
      expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(fingerprint)
    } finally {
      await reopened.close()
    }
  })

  it('derives again, and rewrites the rows, when they were derived under other rules', async () => {
    const { id, deps, fingerprint } = await filled()
    const first = await openMemory(id, deps)
    // rows an older build derived, by rules of its own
    await engineOf(first).db.meta.put({ key: 'derivationRules', value: 'cairn-derive@0' })
    await engineOf(first).db.entities.update('ada lovelace', { description: 'as the old rules had it' })
    await first.close()
    const derive = vi.spyOn(Graph, 'derive')
    const reopened = await openMemory(id, deps)
    try {
      expect(derive).toHaveBeenCalledTimes(1)
      expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(fingerprint)
      expect((await engineOf(reopened).db.entities.get('ada lovelace'))?.description).toBe(ada.description)
      expect((await engineOf(reopened).db.meta.get('derivationRules'))?.value).toBe(DERIVATION_RULES)
    } finally {
      await reopened.close()
    }
  })
})
