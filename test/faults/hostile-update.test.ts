// A peer sends a memory's bound sync document corrupt bytes and hostile but well-formed Yjs
// updates. Each must be refused before it reaches the engine: the graph, the stored rows, the
// files and recall stay exactly as they were, across a reopen too, and valid changes from the
// same peer still apply. Checked differentially: the attacked memory must end equal to a
// control copy that only ever received the valid changes.
// (test/sync/memory-doc.test.ts covers the value checks on a bare document, and
// test/fuzz/sync-socket.test.ts garbage at the server; this covers the engine behind the document.)
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import type { Observation } from '../../src/core/types'
import { createMemory, openMemory, type Memory } from '../../src/index'
import type { MemorySync } from '../../src/sync/memory-sync'
import { ROOTS } from '../../src/sync/layout'
import { channelName } from '../../src/sync/tab-channel'
import { ada, engine as analyticalEngine, society } from '../engine/fixture'
import { canonical } from './page/state'
import { engineOf } from '../../src/internals'

const opened: Memory[] = []
afterEach(async () => {
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
})

interface Device {
  memory: Memory
  sync: MemorySync
  factory: IDBFactory
}

async function device(id?: string, crossTab = true): Promise<Device> {
  const factory = new IDBFactory()
  const memory = await createMemory({ name: 'hostile', indexedDB: factory, IDBKeyRange, ...(id ? { id } : {}) })
  opened.push(memory)
  return { memory, factory, sync: await memory.sync({ crossTab }) }
}

/** A memory with a small graph and a file, bound to its document and listening to other tabs. */
async function victim(): Promise<Device & { slugs: string[] }> {
  const d = await device()
  const conn = await d.memory.connect({ agent: 'owner', tier: 'full' })
  const slugs = [
    (await conn.write({ title: 'Ada and the engine', content: 'Ada wrote about the engine.', entities: [ada, analyticalEngine], relationships: [{ source: ada.name, type: 'wrote_about', target: analyticalEngine.name }] })).slug,
    (await conn.write({ title: 'Ada at the Society', content: 'Ada visited the Society.', entities: [ada, society], relationships: [{ source: ada.name, type: 'visited', target: society.name }] })).slug,
    (await conn.write({ title: 'The engine', content: 'About the engine.', entities: [analyticalEngine] })).slug,
    (await conn.write({ title: 'A stray thought', content: 'Nothing else names this.', entities: [{ name: 'Stray Topic', type: 'concept', description: 'A topic only one note names' }] })).slug,
  ]
  await conn.storeFile({ path: 'notes/ada.txt', data: 'first notes', description: 'Notes on Ada' })
  await d.sync.settled()
  return { ...d, slugs }
}

/** A control copy of `of`: same document state, its own storage, no tab channel, so no attacker reaches it. */
async function control(of: Device): Promise<Device> {
  const d = await device(of.memory.info.id, false)
  Y.applyUpdate(d.sync.doc, Y.encodeStateAsUpdate(of.sync.doc), 'copy')
  await d.sync.settled()
  return d
}

/** Closes `d`'s memory and opens it again from its storage, its document reconciled and settled. */
async function reopenSettled(d: Device): Promise<Memory> {
  opened.splice(opened.indexOf(d.memory), 1)
  await d.memory.close()
  const reopened = await openMemory(d.memory.info.id, { indexedDB: d.factory, IDBKeyRange })
  opened.push(reopened)
  await (await reopened.sync({ crossTab: false })).settled()
  return reopened
}

async function state(m: Memory) {
  const db = engineOf(m).db
  const conn = await m.connect({ agent: 'probe', tier: 'read' })
  const names = async (query: string) => (await conn.recall({ query })).entities.map((e) => e.name)
  return {
    graph: graphFingerprint(engineOf(m).committedGraph),
    rows: canonical({
      observations: (await db.observations.toArray()).sort((a, b) => (a.slug < b.slug ? -1 : 1)),
      entities: (await db.entities.toArray()).sort((a, b) => (a.key < b.key ? -1 : 1)),
      relationships: (await db.relationships.toArray()).sort((a, b) => (a.key < b.key ? -1 : 1)),
      aliases: (await db.aliases.toArray()).map((a) => [a.variant, a.canonical]).sort(),
      files: (await db.files.toArray()).sort((a, b) => (a.path < b.path ? -1 : 1)),
      fileBytes: (await db.fileBytes.toArray()).map((f) => [f.path, f.data.byteLength]).sort(),
    }),
    recall: [await names('mathematician algorithm'), await names('learned society london'), await names('mechanical computer')],
    files: conn.listFiles(),
  }
}

/** The update a peer's transaction on a copy of `doc` produces. */
function peerUpdate(doc: Y.Doc, edit: (maps: Record<string, Y.Map<unknown>>, peer: Y.Doc) => void): Uint8Array {
  const peer = new Y.Doc()
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc))
  const before = Y.encodeStateVector(peer)
  const maps = Object.fromEntries(Object.values(ROOTS).map((r) => [r, peer.getMap(r)]))
  peer.transact(() => edit(maps, peer))
  return Y.encodeStateAsUpdate(peer, before)
}

function valid(slug: string, overrides: Partial<Observation> = {}): Observation {
  const at = '2026-03-14T09:30:00.000Z'
  return {
    slug, title: `Peer note ${slug}`, content: `Written by the peer as ${slug}.`, category: 'note', tags: [], observedAt: at, confidence: 1, source: '',
    entities: [{ name: 'Charles Babbage', type: 'person', description: 'Designer of the difference engine', queries: [] }], relationships: [], files: [],
    createdBy: 'peer', createdAt: at, updatedAt: at, ...overrides,
  }
}

/**
 * Valid changes from the peer: a new observation, an edit and a delete of the victim's, on keys
 * no attack touches, made before the attack so they do not build on it.
 */
function goodUpdate(doc: Y.Doc, slugs: string[]): Uint8Array {
  return peerUpdate(doc, (maps) => {
    maps.observations!.set('peer-good-1', valid('peer-good-1'))
    const edited = maps.observations!.get(slugs[2]!) as Observation
    maps.observations!.set(slugs[2]!, { ...edited, content: 'Edited by the peer.', updatedAt: '2026-03-15T09:30:00.000Z' })
    maps.observations!.delete(slugs[3]!)
  })
}

async function settle(...devices: Device[]): Promise<void> {
  for (const d of devices) await d.sync.settled()
}

/** Resolves once `d`'s document holds `key` in `map`: a tab that heard a hint has read the rows. */
async function holds(d: Device, map: string, key: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!d.sync.doc.getMap(map).has(key)) {
    if (Date.now() > deadline) throw new Error(`${key} never reached the document`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('corrupt bytes from a peer', () => {
  it('are refused on the document; the tab channel carries no content at all; the memory is intact and takes the next valid update', async () => {
    const v = await victim()
    const before = await state(v.memory)
    const good = goodUpdate(v.sync.doc, v.slugs)
    let seed = 7
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)
    const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256))
    const flipped = good.slice()
    for (let i = 0; i < flipped.length; i += 7) flipped[i] = flipped[i]! ^ 0xff
    const garbage: unknown[] = [
      bytes(1), bytes(64), bytes(4096), flipped,
      ...[3, 9, 17, 40].map((n) => good.slice(0, Math.min(n, good.length - 1))),
      'not bytes', 12, null, { length: 3 },
    ]
    // a valid update that only ever travels on the channel: a tab must not take it from there
    const channelOnly = peerUpdate(v.sync.doc, (maps) => maps.observations!.set('peer-channel-1', valid('peer-channel-1')))
    const tab = new BroadcastChannel(channelName(v.memory.info.id))
    try {
      for (const update of [...garbage, channelOnly]) tab.postMessage({ kind: 'update', from: 'evil-tab', update })
      tab.postMessage({ kind: 'welcome', from: 'evil-tab', to: 'anyone', update: channelOnly, stateVector: bytes(8) })
      tab.postMessage({ kind: 'hello', from: 'evil-tab', stateVector: bytes(30) })
      tab.postMessage('not an object')
      for (const update of garbage) {
        try {
          Y.applyUpdate(v.sync.doc, update as Uint8Array, 'peer')
        } catch {
          // throwing is a fine way to refuse; what matters is what the memory holds after
        }
      }
      await settle(v)
      expect(await state(v.memory)).toEqual(before)
      expect(v.sync.failures).toEqual([])

      // Another tab of this profile saves a valid update in the shared database and says so:
      // that is read, after every message posted before it.
      await engineOf(v.memory).db.docUpdates.add({ update: good })
      tab.postMessage('saved')
      await holds(v, ROOTS.observations, 'peer-good-1')
      const c = await control(v)
      Y.applyUpdate(c.sync.doc, good, 'peer')
      await settle(v, c)
    } finally {
      tab.close()
    }
    const after = await state(v.memory)
    expect(after.graph).not.toBe(before.graph)
    expect(engineOf(v.memory).committedGraph.getObservation('peer-good-1')).toBeDefined()
    expect(engineOf(v.memory).committedGraph.getObservation('peer-channel-1')).toBeUndefined()
    expect(v.sync.doc.getMap(ROOTS.observations).has('peer-channel-1')).toBe(false)
    expect(engineOf(v.memory).committedGraph.getObservation(v.slugs[3]!)).toBeUndefined()
    expect(engineOf(v.memory).committedGraph.getObservation(v.slugs[2]!)?.content).toBe('Edited by the peer.')
  })
})

/** Well-formed Yjs, hostile values, one list per kind of attack. */
const ATTACKS: Record<string, (maps: Record<string, Y.Map<unknown>>, slugs: string[]) => void> = {
  'wrong types': (m) => {
    m.observations!.set('bad-types-1', { ...valid('bad-types-1'), confidence: 'high' })
    m.observations!.set('bad-types-2', { ...valid('bad-types-2'), tags: 'a,b' })
    m.observations!.set('bad-types-3', { ...valid('bad-types-3'), entities: { name: 'x' } })
    m.observations!.set('bad-types-4', { ...valid('bad-types-4'), observedAt: 1_700_000_000 })
    m.observations!.set('bad-types-5', [valid('bad-types-5')])
    m.observations!.set('bad-types-6', 'just a string')
  },
  'huge strings': (m) => {
    m.observations!.set('huge-1', valid('huge-1', { content: 'x'.repeat(300_000) }))
    m.observations!.set('huge-2', valid('huge-2', { entities: [{ name: 'N'.repeat(50_000), type: 't', description: 'd', queries: [] }] }))
    m.observations!.set('huge-3', valid('huge-3', { entities: [{ name: 'Huge', type: 't', description: 'd'.repeat(1_000_000), queries: [] }] }))
    const long = 's'.repeat(10_000)
    m.observations!.set(long, valid(long))
  },
  'prototype keys': (m) => {
    m.observations!.set('__proto__', valid('__proto__'))
    m.observations!.set('constructor', valid('constructor'))
    m.observations!.set('proto-1', JSON.parse('{"__proto__": {"polluted": true}, "slug": "proto-1"}'))
    m.aliases!.set('__proto__', { variant: '__proto__', canonical: 'ada lovelace', createdAt: '2026-03-14T09:30:00.000Z' })
  },
  'a file whose bytes disagree with its entry': (m) => {
    const at = '2026-03-14T09:30:00.000Z'
    m.files!.set('notes/lie.txt', { path: 'notes/lie.txt', filename: 'lie.txt', type: 'text/plain', size: 3, description: 'claims 3 bytes', createdBy: 'peer', createdAt: at, sha256: '0'.repeat(64) })
    m.fileBytes!.set('notes/lie.txt', new Uint8Array(1000))
  },
  'unknown fields': (m) => {
    m.observations!.set('extra-1', { ...valid('extra-1'), admin: true })
    m.observations!.set('extra-2', valid('extra-2', { entities: [{ ...ada, queries: [], admin: true } as never] }))
    m.observations!.set('extra-3', valid('extra-3', { relationships: [{ source: 'A', type: 't', target: 'B', description: '', weight: 1, admin: true } as never] }))
  },
  'invalid slugs': (m) => {
    m.observations!.set('', valid(''))
    m.observations!.set('mismatch-1', valid('another-slug'))
    m.observations!.set('s'.repeat(700), valid('s'.repeat(700)))
  },
  // naming an entity with an empty description is a valid mention; these are not
  'entities with a missing or blank description, or no name': (m) => {
    m.observations!.set('nodesc-1', valid('nodesc-1', { entities: [{ name: 'Nameless', type: 't', queries: [] } as never] }))
    m.observations!.set('nodesc-2', valid('nodesc-2', { entities: [{ name: 'Blank', type: 't', description: '   ', queries: [] }] }))
    m.observations!.set('nodesc-3', valid('nodesc-3', { entities: [{ name: '', type: 't', description: 'no name', queries: [] }] }))
  },
  'nested Yjs types and foreign roots': (m, _s) => {
    const nested = new Y.Map<unknown>()
    m.observations!.set('nested-1', nested)
    nested.set('slug', 'nested-1')
    m.observations!.set('text-1', new Y.Text('hello'))
  },
  'an existing observation overwritten with garbage': (m, slugs) => {
    m.observations!.set(slugs[0]!, { slug: slugs[0], title: 42 })
    m.observations!.set(slugs[1]!, valid(slugs[1]!, { confidence: 7 }))
  },
  'a file entry without its bytes, or with an invalid path': (m) => {
    m.files!.set('notes/ghost.txt', { path: 'notes/ghost.txt', filename: 'ghost.txt', type: 'text/plain', size: 5, description: '', createdBy: 'peer', createdAt: '2026-03-14T09:30:00.000Z', sha256: '0'.repeat(64) })
    m.files!.set('../escape.txt', { path: '../escape.txt', filename: 'escape.txt', type: 'text/plain', size: 2, description: '', createdBy: 'peer', createdAt: '2026-03-14T09:30:00.000Z', sha256: '0'.repeat(64) })
    m.fileBytes!.set('../escape.txt', new Uint8Array([1, 2]))
    m.fileBytes!.set('notes/orphan.bin', 'not binary')
  },
}

describe('hostile but well-formed updates from a peer', () => {
  for (const [name, attack] of Object.entries(ATTACKS)) {
    it(`refuses ${name}: the memory stays as it was, across a reopen, and takes valid changes`, async () => {
      const v = await victim()
      const c = await control(v)
      const before = await state(v.memory)
      const good = goodUpdate(v.sync.doc, v.slugs)
      const hostile = peerUpdate(v.sync.doc, (maps, peer) => {
        attack(maps, v.slugs)
        peer.getMap('admin').set('role', 'owner')
      })
      Y.applyUpdate(v.sync.doc, hostile, 'peer')
      await settle(v)
      expect(await state(v.memory)).toEqual(before)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(v.sync.failures).toEqual([])
      // what failed its checks is counted for the sync panel; a well-formed file entry is only judged against its bytes
      if (name !== 'a file whose bytes disagree with its entry') expect(v.sync.view.invalidFromPeers).toBeGreaterThan(0)

      // valid changes from the same peer still apply, exactly as on a copy that never saw the attack
      Y.applyUpdate(v.sync.doc, good, 'peer')
      Y.applyUpdate(c.sync.doc, good, 'peer')
      await settle(v, c)
      const expected = await state(c.memory)
      expect(expected.graph).not.toBe(before.graph)
      expect(await state(v.memory)).toEqual(expected)

      // the hostile values are in the saved document; reopening must not let them in
      const reopened = await reopenSettled(v)
      expect(await state(reopened)).toEqual(expected)
    })
  }
})

describe('a __proto__ key inside an otherwise valid value', () => {
  // Decoded, a "__proto__" key becomes the value's prototype; every re-encoding (merging the saved
  // log, a state update for a new peer) drops it. So it is ignored, live and after a reopen alike:
  // the value is judged by its own fields, and nothing is polluted.
  it('is ignored the same way live and after a reopen, so devices agree', async () => {
    const v = await victim()
    const c = await control(v)
    const smuggled = peerUpdate(v.sync.doc, (maps) => {
      maps.observations!.set('proto-2', { ...valid('proto-2'), entities: [JSON.parse('{"__proto__": {"polluted": true}, "name": "Smuggled", "type": "t", "description": "d", "queries": []}')] })
    })
    Y.applyUpdate(v.sync.doc, smuggled, 'peer')
    // the control copy gets the value re-encoded, as a peer joining later would
    const reencoded = new Y.Doc()
    Y.applyUpdate(reencoded, Y.encodeStateAsUpdate(v.sync.doc))
    Y.applyUpdate(c.sync.doc, Y.encodeStateAsUpdate(reencoded), 'peer')
    await settle(v, c)
    const live = await state(v.memory)
    expect(engineOf(v.memory).committedGraph.entities.get('smuggled')?.description).toBe('d')
    expect(live).toEqual(await state(c.memory))
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(JSON.stringify(await engineOf(v.memory).db.observations.get('proto-2'))).not.toContain('polluted')

    const reopened = await reopenSettled(v)
    expect(await state(reopened)).toEqual(live)
  })
})

describe('aliases that form a loop', () => {
  // Two devices merging A into B and B into A at the same moment leave exactly this loop, so it
  // is not refused: every device settles it the same way, merged into the loop's least key.
  it('are settled the same on every device and across a reopen; a self-alias is dropped', async () => {
    const v = await victim()
    const c = await control(v)
    const at = '2026-03-14T09:30:00.000Z'
    const loop = peerUpdate(v.sync.doc, (m) => {
      m.aliases!.set('ada lovelace', { variant: 'ada lovelace', canonical: 'analytical engine', createdAt: at })
      m.aliases!.set('analytical engine', { variant: 'analytical engine', canonical: 'ada lovelace', createdAt: at })
      m.aliases!.set('royal society', { variant: 'royal society', canonical: 'royal society', createdAt: at })
    })
    Y.applyUpdate(v.sync.doc, loop, 'peer')
    Y.applyUpdate(c.sync.doc, loop, 'peer')
    await settle(v, c)
    const g = engineOf(v.memory).committedGraph
    expect(g.entities.has('analytical engine')).toBe(false)
    expect(g.entities.has('ada lovelace')).toBe(true)
    expect(g.entities.has('royal society')).toBe(true)
    expect([...g.aliasMap()]).toEqual([['analytical engine', 'ada lovelace']])
    const settled = await state(v.memory)
    expect(settled).toEqual(await state(c.memory))

    const reopened = await reopenSettled(v)
    expect(await state(reopened)).toEqual(settled)
  })
})
