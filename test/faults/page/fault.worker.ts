// The engine in a module worker for the fault tests (test/faults/): it opens a memory the way
// the app's worker does (Memory.create / Memory.open, then `sync()`), runs the page's writes,
// and reports the memory's state as stored, so a test can check it after the worker is killed.
import * as Comlink from 'comlink'
import * as Y from 'yjs'
import { Graph } from '../../../src/core/graph'
import { graphFingerprint } from '../../helpers/graph-fingerprint'
import type { ObservationInput, ObservationPatch } from '../../../src/core/types'
import type { Connection, StoreFileInput } from '../../../src/engine/connection'
import type { MemorySync, SyncOptions } from '../../../src/sync/memory-sync'
import { Memory } from '../../../src/engine/memory-handle'
import { installErrorTransfer } from '../../../src/engine/wire'
import { MemoryDB } from '../../../src/store/db'
import { derivedTables } from '../../../src/store/derived-rows'
import { readDerived } from '../../helpers/read-derived'
import { readMemoryDoc } from '../../../src/sync/memory-doc'
import { canonical, type StoredState } from './state'
import { engineOf } from '../../../src/internals'
import { validateObservationInput } from '../../../src/core/contract'
import { IMPORT_PENDING_KEY } from '../../../src/store/import-pieces'

let memory: Memory | undefined
let conn: Connection | undefined
let sync: MemorySync | undefined

function connection(): Connection {
  if (!conn) throw new Error('no memory is open in this worker')
  return conn
}

/** The stored rows of memory `id`, read straight from IndexedDB, and what they derive to. */
async function readStored(id: string): Promise<StoredState> {
  const db = new MemoryDB(id, {})
  try {
    const [observations, { entities, relationships }, aliases, files, fileBytes, updates] = await db.transaction(
      'r', [db.observations, ...derivedTables(db), db.aliases, db.files, db.fileBytes, db.docUpdates],
      // the rows with their backing notes put back, to compare whole with a derivation
      () => Promise.all([db.observations.toArray(), readDerived(db), db.aliases.toArray(), db.files.toArray(), db.fileBytes.toArray(), db.docUpdates.toArray()]),
    )
    const derived = Graph.derive(observations, new Map(aliases.map((a) => [a.variant, a.canonical])))
    const byKey = <T extends { key: string }>(rows: T[]) => [...rows].sort((a, b) => (a.key < b.key ? -1 : 1))
    const doc = new Y.Doc()
    if (updates.length) Y.applyUpdate(doc, Y.mergeUpdates(updates.map((u) => u.update)))
    const inDoc = readMemoryDoc(doc)
    return {
      observations: [...observations].sort((a, b) => (a.slug < b.slug ? -1 : 1)),
      rows: canonical({ entities: byKey(entities), relationships: byKey(relationships) }),
      derived: canonical({ entities: byKey([...derived.entities.values()]), relationships: byKey([...derived.relationships.values()]) }),
      entityKeys: entities.map((e) => e.key).sort(),
      relationshipKeys: relationships.map((r) => r.key).sort(),
      files: files.map((f) => ({ path: f.path, size: f.size })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      fileBytes: fileBytes.map((f) => ({ path: f.path, size: f.data.byteLength })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      docObservations: [...inDoc.observations.values()].sort((a, b) => (a.slug < b.slug ? -1 : 1)),
      docInvalid: inDoc.invalid.length,
    }
  } finally {
    db.close()
  }
}

const api = {
  async create(name: string, options: SyncOptions = {}): Promise<{ id: string; token: string }> {
    memory = await Memory.create({ name })
    sync = await memory.sync(options)
    conn = await memory.connect({ agent: 'fault-tests', tier: 'full' })
    return { id: memory.info.id, token: conn.token! }
  },

  /** This device's copy of a memory made on another device, filled by syncing with the server. */
  async join(id: string, options: SyncOptions): Promise<void> {
    memory = await Memory.create({ name: 'joined', id })
    sync = await memory.sync(options)
    conn = await memory.connect({ agent: 'fault-tests', tier: 'full' })
  },

  /** Opens an existing memory as the app does: with its sync document bound, and a server if given. */
  async open(id: string, token: string, options: SyncOptions = {}): Promise<void> {
    memory = await Memory.open(id)
    sync = await memory.sync(options)
    conn = await memory.connectWithToken(token)
  },

  /**
   * Delays every save of the sync document by `ms`, as a busy disk would: the rows of a commit
   * and its document update are separate transactions, so this widens the time between them.
   */
  slowDocSaves(ms: number): void {
    if (!memory) throw new Error('no memory is open in this worker')
    const table = engineOf(memory).db.docUpdates
    const add = table.add.bind(table)
    table.add = ((...args: Parameters<typeof add>) => new Promise((r) => setTimeout(r, ms)).then(() => add(...args))) as typeof add
  },

  /** Connects the open memory's sync to a server. */
  async connectServer(serverUrl: string, token: string): Promise<void> {
    if (!memory) throw new Error('no memory is open in this worker')
    sync = await memory.sync({ serverUrl, token })
  },

  async write(input: ObservationInput): Promise<{ slug: string }> {
    return { slug: (await connection().write(input)).slug }
  },
  async update(slug: string, patch: ObservationPatch): Promise<{ slug: string }> {
    return { slug: (await connection().update(slug, patch)).observation.slug }
  },
  async delete(slug: string): Promise<{ slug: string }> {
    return { slug: (await connection().delete(slug)).slug }
  },
  async storeFile(input: StoreFileInput): Promise<{ path: string; size: number }> {
    const f = await connection().storeFile(input)
    return { path: f.path, size: f.size }
  },

  /**
   * Imports `count` notes of about 1.2 kB each (named `<prefix>-<i>`) into the open memory, as a
   * file import does: large enough to be written in many transactions.
   */
  async importNotes(count: number, prefix: string): Promise<number> {
    if (!memory) throw new Error('no memory is open in this worker')
    const at = new Date().toISOString()
    const notes = Array.from({ length: count }, (_, i) => {
      const { warnings: _w, ...fields } = validateObservationInput({
        title: `${prefix} ${i}`,
        content: `Harbour log ${i}. ${'Words about the harbour and its ships. '.repeat(25).trim()}`,
        entities: [{ name: `Ship ${i % 97}`, type: 'vessel', description: `a ship of the log ${i % 97}` }, { name: `Harbour ${i % 13}`, type: 'place', description: `harbour number ${i % 13}` }],
        relationships: [{ source: `Ship ${i % 97}`, type: 'docked_at', target: `Harbour ${i % 13}` }],
      })
      return { slug: `${prefix}-${i}`, ...fields, observedAt: fields.observedAt ?? at, createdBy: 'import', createdAt: at, updatedAt: at }
    })
    return engineOf(memory).importObservations(notes, [])
  },

  /** How many observation rows memory `id` stores, and whether an import of it has not committed. */
  async importProgress(id: string): Promise<{ observations: number; pending: boolean }> {
    const db = new MemoryDB(id, {})
    try {
      const [observations, pending] = await Promise.all([db.observations.count(), db.meta.get(IMPORT_PENDING_KEY)])
      return { observations, pending: pending !== undefined }
    } finally {
      db.close()
    }
  },

  /** A further agent connection to the open memory (stored in its database). */
  async connectAgent(agent: string): Promise<string> {
    if (!memory) throw new Error('no memory is open in this worker')
    return (await memory.connect({ agent, tier: 'read' })).id
  },
  async consolidate(): Promise<number> {
    return (await connection().consolidate()).length
  },

  /** Entity names a recall ranks for `query`. */
  async recall(query: string): Promise<string[]> {
    return (await connection().recall({ query })).entities.map((e) => e.name)
  },

  /** Whether the open engine's in-memory graph is exactly what its stored observations derive. */
  async engineMatchesStore(): Promise<{ engine: string; derivedFromRows: string; observations: number }> {
    if (!memory) throw new Error('no memory is open in this worker')
    const g = engineOf(memory).committedGraph
    const db = engineOf(memory).db
    const [observations, aliases] = await Promise.all([db.observations.toArray(), db.aliases.toArray()])
    const derived = Graph.derive(observations, new Map(aliases.map((a) => [a.variant, a.canonical])))
    return { engine: graphFingerprint(g), derivedFromRows: graphFingerprint(derived), observations: g.observationCount }
  },

  syncView(): SyncView | null {
    return sync ? sync.view : null
  },

  async settled(): Promise<void> {
    await sync?.settled()
  },

  readStored,

  async close(): Promise<void> {
    await memory?.close()
    memory = undefined
    conn = undefined
    sync = undefined
  },
}

type SyncView = MemorySync['view']
export type FaultApi = typeof api

installErrorTransfer()
Comlink.expose(api)
