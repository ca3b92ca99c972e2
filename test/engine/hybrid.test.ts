// Hybrid recall through the engine with the embedded default model, and the frozen retrieval config.
import { describe, expect, it } from 'vitest'
import { IDBKeyRange } from 'fake-indexeddb'
import { migrateMemory, openMemory } from '../../src/index'
import type { Embedder } from '../../src/search/embedder'
import { defaultEmbedder } from '../support/default-embedder'
import { fixture } from './fixture'
import { engineOf } from '../../src/internals'
import { MemoryDB } from '../../src/store/db'

async function seed(embedder: Embedder) {
  const f = await fixture({ embedder })
  await f.conn.write({
    title: 'Clinic visit',
    content: 'Saw Dr. Okafor about the knee.',
    entities: [
      { name: 'Amara Okafor', type: 'person', description: 'physician at the riverside clinic' },
      { name: 'Riverside Clinic', type: 'organization', description: 'small medical practice by the river' },
      { name: 'Fender Stratocaster', type: 'thing', description: 'electric guitar bought last spring' },
    ],
    relationships: [{ source: 'Amara Okafor', type: 'works at', target: 'Riverside Clinic' }],
  })
  return f
}

describe('hybrid recall', () => {
  it('finds an entity by meaning when no query word is in its name or description', async () => {
    const embedder = await defaultEmbedder()
    const { conn, memory } = await seed(embedder)
    expect(memory.info.retrieval).toMatchObject({ embedder: embedder.id, dimensions: 100, modelChecksum: embedder.checksum })
    const r = await conn.recall({ query: 'doctor' })
    expect(r.entities[0]!.name).toBe('Amara Okafor')
    // and the organization attached to her comes along through the graph
    expect(r.entities.map((e) => e.name)).toContain('Riverside Clinic')
    expect(r.entities.map((e) => e.name).indexOf('Fender Stratocaster')).not.toBe(0)
  }, 30_000) // the first test loads the model

  it('opening with another embedder, or none, is config_locked; migrate re-embeds into a new memory', async () => {
    const embedder = await defaultEmbedder()
    const f = await seed(embedder)
    const other: Embedder = { id: 'other@1', dimensions: 100, checksum: 'x', embed: (t) => embedder.embed(t) }
    await expect(f.reopen(other)).rejects.toMatchObject({ code: 'config_locked' })
    await expect(f.reopen()).rejects.toMatchObject({ code: 'config_locked' })
    const reopened = await f.reopen(embedder)
    const c = await reopened.connect({ agent: 'again' })
    expect((await c.recall({ query: 'doctor' })).entities[0]!.name).toBe('Amara Okafor')
    const moved = await migrateMemory(f.memory.info.id, { name: 'bm25 copy', indexedDB: f.factory, IDBKeyRange })
    expect(moved.info.retrieval.embedder).toBe('bm25-only')
    const mc = await moved.connect({ agent: 'm' })
    expect((await mc.inspect('Amara Okafor')).outgoing.map((r) => r.target)).toEqual(['Riverside Clinic'])
    expect((await mc.recall({ query: 'physician' })).entities[0]!.name).toBe('Amara Okafor')
    const again = await openMemory(moved.info.id, { indexedDB: f.factory, IDBKeyRange })
    expect(engineOf(again).committedGraph.observationCount).toBe(1)
  })

  it('a saved index reopens without re-embedding', async () => {
    const embedder = await defaultEmbedder()
    const f = await seed(embedder)
    await f.memory.close()
    let calls = 0
    const counting: Embedder = { id: embedder.id, dimensions: embedder.dimensions, checksum: embedder.checksum, embed: (t) => (calls++, embedder.embed(t)) }
    const reopened = await f.reopen(counting)
    expect(calls).toBe(0)
    const c = await reopened.connect({ agent: 'x' })
    expect((await c.recall({ query: 'doctor' })).entities[0]!.name).toBe('Amara Okafor')
    // the query itself, then the words of the descriptions checked for a paraphrase of it
    expect(calls).toBe(2)
  })

  it('saved indexes of another text analysis reopen with their BM25 part rebuilt from the graph, nothing embedded', async () => {
    const embedder = await defaultEmbedder()
    const f = await seed(embedder)
    const before = await f.conn.recall({ query: 'knee physician' })
    await f.memory.close()
    // as a build that tokenizes otherwise would find them: the snapshots keep digests, not texts
    const db = new MemoryDB(f.memory.info.id, { indexedDB: f.factory, IDBKeyRange })
    for (const key of ['entityIndex', 'noteIndex']) {
      const row = (await db.meta.get(key))!.value as { snapshot: Record<string, unknown> }
      expect(row.snapshot.docs).toBeUndefined()
      await db.meta.put({ key, value: { ...row, snapshot: { ...row.snapshot, analysis: 'another analysis' } } })
    }
    db.close()
    let calls = 0
    const counting: Embedder = { id: embedder.id, dimensions: embedder.dimensions, checksum: embedder.checksum, embed: (t) => (calls++, embedder.embed(t)) }
    const reopened = await f.reopen(counting)
    expect(calls).toBe(0)
    const c = await reopened.connect({ agent: 'x' })
    expect(await c.recall({ query: 'knee physician' })).toEqual(before)
  })

  it('saves the index after a quiet period, so a tab closed without close() reopens without re-embedding', async () => {
    const embedder = await defaultEmbedder()
    const f = await seed(embedder)
    // past the save's quiet period (this timer is due after the engine's, so it fires later),
    // then behind the save on the write queue, so the check does not depend on the machine's load
    await new Promise((r) => setTimeout(r, 2_100))
    await (engineOf(f.memory) as unknown as { c: { enqueue(task: () => Promise<void>, reads: 'one note'): Promise<void> } }).c.enqueue(async () => undefined, 'one note')
    let calls = 0
    const counting: Embedder = { id: embedder.id, dimensions: embedder.dimensions, checksum: embedder.checksum, embed: (t) => (calls++, embedder.embed(t)) }
    await f.reopen(counting)
    expect(calls).toBe(0)
  })
})
