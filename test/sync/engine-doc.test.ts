// Two devices, each an engine on its own IndexedDB bound to its own Y.Doc, exchange document
// updates over a relay that can be cut: after offline writes on both and a reconnect, the
// derived graphs, the stored rows and recall agree.
import type { ObservationInput } from '../../src/index'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { bindMemoryDoc, type DocBinding } from '../../src/sync/doc-bridge'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { ROOTS } from '../../src/sync/layout'
import { sha256Hex } from '../../src/engine/tokens'
import { fileMeta, observation } from './fixture'
import { ada, engine as analyticalEngine, fixture, society, type Fixture } from '../engine/fixture'
import { engineOf } from '../../src/internals'
import { observationBytes, PIECE_BYTES } from '../../src/store/import-pieces'

interface Device {
  f: Fixture
  doc: Y.Doc
  binding: DocBinding
}

async function device(): Promise<Device> {
  const f = await fixture()
  const doc = createMemoryDoc()
  return { f, doc, binding: await bindMemoryDoc(engineOf(f.memory), doc) }
}

/** Relays updates between two docs; while offline, each side's updates wait in its outbox. */
function relay(a: Y.Doc, b: Y.Doc) {
  let online = true
  const outbox = new Map<Y.Doc, Uint8Array[]>([[a, []], [b, []]])
  const forward = (from: Y.Doc, to: Y.Doc) => (update: Uint8Array, origin: unknown) => {
    if (origin === 'relay') return
    if (online) Y.applyUpdate(to, update, 'relay')
    else outbox.get(from)!.push(update)
  }
  a.on('update', forward(a, b))
  b.on('update', forward(b, a))
  return {
    offline: () => void (online = false),
    online: () => {
      online = true
      for (const u of outbox.get(a)!.splice(0)) Y.applyUpdate(b, u, 'relay')
      for (const u of outbox.get(b)!.splice(0)) Y.applyUpdate(a, u, 'relay')
    },
  }
}

async function rows(d: Device) {
  const db = engineOf(d.f.memory).db
  const entities = (await db.entities.toArray()).map((e) => [e.key, e.description, e.degree]).sort()
  const relationships = (await db.relationships.toArray()).map((r) => r.key).sort()
  const observations = (await db.observations.toArray()).map((o) => o.slug).sort()
  return { entities, relationships, observations }
}

const obs = (title: string, entities: NonNullable<ObservationInput['entities']>, relationships: NonNullable<ObservationInput['relationships']> = []): ObservationInput => ({ title, content: `${title}.`, entities, relationships })

describe('engine bound to a sync document', () => {
  it('converges after offline writes, updates and deletes on two devices', async () => {
    const a = await device()
    const b = await device()
    const link = relay(a.doc, b.doc)
    const first = await a.f.conn.write(obs('Ada and the engine', [ada, analyticalEngine], [{ source: ada.name, type: 'worked_on', target: analyticalEngine.name }]))
    await b.binding.settled()
    expect((await b.f.conn.inspect('Ada Lovelace')).outgoing).toHaveLength(1)

    link.offline()
    await a.f.conn.update(first.slug, { entities: [{ ...ada, description: 'Wrote notes on the Analytical Engine' }] })
    const onB = await b.f.conn.write(obs('The society', [society, ada], [{ source: ada.name, type: 'member_of', target: society.name }]))
    const gone = await b.f.conn.write(obs('Babbage', [{ name: 'Charles Babbage', type: 'person', description: 'Designer of the engine' }]))
    await b.f.conn.delete(gone.slug)
    expect(graphFingerprint(engineOf(a.f.memory).committedGraph)).not.toBe(graphFingerprint(engineOf(b.f.memory).committedGraph))

    link.online()
    await a.binding.settled()
    await b.binding.settled()
    const ga = engineOf(a.f.memory).committedGraph
    const gb = engineOf(b.f.memory).committedGraph
    expect(graphFingerprint(ga)).toBe(graphFingerprint(gb))
    expect(ga.getObservation(onB.slug)).toBeDefined()
    expect(ga.getObservation(gone.slug)).toBeUndefined()
    expect(await rows(a)).toEqual(await rows(b))
    const query = { query: 'mathematician society' }
    expect((await a.f.conn.recall(query)).entities.map((e) => e.name)).toEqual((await b.f.conn.recall(query)).entities.map((e) => e.name))
    expect(a.binding.failures).toEqual([])
  })

  it('carries an accepted merge to the other device', async () => {
    const a = await device()
    const b = await device()
    relay(a.doc, b.doc)
    await a.f.conn.write(obs('One', [{ name: 'International Business Machines', type: 'organization', description: 'American computer company' }]))
    await a.f.conn.write(obs('Two', [{ name: 'IBM', type: 'organization', description: 'computer company from Armonk' }]))
    const proposals = await a.f.conn.consolidate()
    expect(proposals.length).toBeGreaterThan(0)
    await a.f.conn.acceptProposal(proposals[0]!.id)
    await b.binding.settled()
    expect(engineOf(b.f.memory).committedGraph.entities.size).toBe(1)
    expect(graphFingerprint(engineOf(a.f.memory).committedGraph)).toBe(graphFingerprint(engineOf(b.f.memory).committedGraph))
  })

  it('adds what the engine held before binding to the document, and takes what the document holds', async () => {
    const f = await fixture()
    const early = await f.conn.write(obs('Before sync', [ada]))
    const peer = await device()
    await peer.f.conn.write(obs('From the peer', [society]))
    const doc = createMemoryDoc()
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(peer.doc))
    const binding = await bindMemoryDoc(engineOf(f.memory), doc)
    await binding.settled()
    expect(engineOf(f.memory).committedGraph.entities.has('royal society')).toBe(true)
    expect(doc.getMap('observations').has(early.slug)).toBe(true)
  })
})

describe('files from another device', () => {
  it('an entry whose bytes come in a later transaction is stored when they arrive; bytes that do not match their entry are not', async () => {
    const { f, doc, binding } = await device()
    const bytes = new TextEncoder().encode('minutes of the meeting')
    const entry = { ...fileMeta('docs/minutes.txt', bytes.byteLength), sha256: await sha256Hex(bytes) }
    const files = doc.getMap(ROOTS.files)
    const fileBytes = doc.getMap(ROOTS.fileBytes)
    Y.transact(doc, () => files.set(entry.path, entry), 'peer')
    await binding.settled()
    expect((await f.conn.listFiles()).map((x) => x.path)).toEqual([])
    Y.transact(doc, () => fileBytes.set(entry.path, bytes), 'peer')
    await binding.settled()
    expect((await f.conn.listFiles()).map((x) => x.path)).toEqual(['docs/minutes.txt'])
    expect(new TextDecoder().decode((await f.conn.readFile('docs/minutes.txt')).data)).toBe('minutes of the meeting')

    // an entry that lies about its bytes (size or hash) is kept out
    Y.transact(doc, () => {
      files.set('docs/lie.txt', { ...entry, path: 'docs/lie.txt', filename: 'lie.txt' })
      fileBytes.set('docs/lie.txt', new TextEncoder().encode('other bytes, same length!'.slice(0, bytes.byteLength)))
    }, 'peer')
    await binding.settled()
    expect((await f.conn.listFiles()).map((x) => x.path)).toEqual(['docs/minutes.txt'])
  })
})

describe('a large remote change', () => {
  it('is applied a piece at a time, each under the size of an import piece, and reaches the same graph and rows', async () => {
    const a = await device()
    const b = await device()
    const link = relay(a.doc, b.doc)
    link.offline()
    const long = 'Words about the harbour and its ships. '.repeat(25).trim()
    const notes = Array.from({ length: 400 }, (_, i) =>
      observation(`bulk-${i}`, { content: `Harbour log ${i}. ${long}`, entities: [{ name: `Ship ${i % 37}`, type: 'vessel', description: `a ship of the log ${i % 37}`, queries: [] }] }),
    )
    // one import on A: its document update carries every note at once
    expect(await engineOf(a.f.memory).importObservations(notes, [])).toBe(400)
    const applied: number[] = []
    const eb = engineOf(b.f.memory)
    const real = eb.applyRemote.bind(eb)
    eb.applyRemote = (change) => {
      applied.push(change.put.reduce((s, o) => s + observationBytes(o), 0))
      return real(change)
    }
    link.online()
    await b.binding.settled()
    expect(applied.length).toBeGreaterThan(2)
    for (const bytes of applied) expect(bytes).toBeLessThanOrEqual(PIECE_BYTES)
    expect([...engineOf(b.f.memory).committedGraph.allObservations()]).toHaveLength(400)
    expect(graphFingerprint(engineOf(b.f.memory).committedGraph)).toBe(graphFingerprint(engineOf(a.f.memory).committedGraph))
    expect(await rows(b)).toEqual(await rows(a))
  })
})

describe('tabs of one browser profile', () => {
  it('two tabs of one memory (one database) converge through the tab channel, without a server', async () => {
    const { IDBFactory, IDBKeyRange } = await import('fake-indexeddb')
    const { createMemory, openMemory } = await import('../../src/index')
    // tabs of one browser profile share the memory's database; the channel only points at it
    const profile = new IDBFactory()
    const a = await createMemory({ name: 'tabs', indexedDB: profile, IDBKeyRange })
    const b = await openMemory(a.info.id, { indexedDB: profile, IDBKeyRange })
    const early = await (await a.connect({ agent: 'tab-a', tier: 'full' })).write(obs('Before tab B synced', [ada]))
    const syncA = await a.sync()
    const syncB = await b.sync()
    const later = await (await b.connect({ agent: 'tab-b', tier: 'full' })).write(obs('From tab B', [society]))
    const end = Date.now() + 3_000
    while (Date.now() < end) {
      await syncA.settled()
      await syncB.settled()
      if (engineOf(a).committedGraph.getObservation(later.slug) && engineOf(b).committedGraph.getObservation(early.slug)) break
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(graphFingerprint(engineOf(a).committedGraph)).toBe(graphFingerprint(engineOf(b).committedGraph))
    expect(engineOf(b).committedGraph.getObservation(early.slug)).toBeDefined()
    await a.close()
    await b.close()
  })
})
