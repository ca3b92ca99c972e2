// One memory kept in a folder on disk for Node processes (the MCP server, scripts): opened with
// the same id, connections and retrieval config at every start, every commit durable on its own.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { IDBKeyRange as FakeKeyRange } from 'fake-indexeddb'
import { MemoryError } from '../core/errors'
import { GRAPH_SNAPSHOT_KEY, INDEX_SNAPSHOT_KEY, NAME_BLOCKS_KEY, NOTE_INDEX_SNAPSHOT_KEY, NOTE_TEXTS_KEY } from '../store/commit'
import { Memory } from '../engine/memory-handle'
import { createDefaultEmbedder } from '../search/default-embedder'
import type { Embedder } from '../search/embedder'
import { STATIC_MODEL_ID } from '../search/static-model-files'
import { MemoryDB, RegistryDB, type IndexedDBFactory } from '../store/db'
import { LOG_FILE, openDurableIndexedDB, SNAPSHOT_FILE, type DurableIndexedDB, type DurableStoreOptions } from './durable-indexeddb'

/** Derived rows the durable store does not keep. */
const DERIVED_TABLES = new Set(['entities', 'relationships', 'entityNotes', 'relationshipNotes'])
/** Meta rows the durable store keeps at close and compaction only. */
const DEFERRED_META = new Set([INDEX_SNAPSHOT_KEY, NOTE_INDEX_SNAPSHOT_KEY, GRAPH_SNAPSHOT_KEY, NAME_BLOCKS_KEY])

export interface NodeMemoryOptions extends DurableStoreOptions {
  /** Name of the memory when the folder is new. */
  name?: string
  /**
   * The embedder of a new memory (hybrid recall), and the one an existing memory is opened with.
   * Without one, a new memory ranks with the package's own model (as `cairn mcp --dir` does), and
   * a memory frozen with that model is opened with it: only another model must be handed in.
   */
  embedder?: Embedder
  /** Creates the memory BM25-only (words alone), with or without an embedder given. */
  bm25Only?: boolean
  /** Makes the memory of an empty folder (say, from a backup) instead of a new empty one. */
  create?: (deps: IndexedDBFactory) => Promise<Memory>
  /** Fails with not_found instead of creating a memory in an empty folder. */
  mustExist?: boolean
}

export interface NodeMemory {
  memory: Memory
  store: DurableIndexedDB
  /** How long opening took: reading the folder into the in-process IndexedDB, then opening the memory on it. */
  timings: { storeMs: number; memoryMs: number }
  /** Saves the search index, syncs the log and releases the folder. */
  close(): Promise<void>
}

const MEMORY_DB_PREFIX = 'cairn-memory-'

/** Opens the memory kept in `dir`, or creates it there. */
export async function openNodeMemory(dir: string, options: NodeMemoryOptions = {}): Promise<NodeMemory> {
  const t0 = performance.now()
  if (options.mustExist && !existsSync(join(dir, SNAPSHOT_FILE)) && !existsSync(join(dir, LOG_FILE))) {
    throw new MemoryError('not_found', `${dir} holds no memory; write to it with cairn mcp or cairn import first`, { dir })
  }
  const store = await openDurableIndexedDB(
    dir,
    (name, deps) => (name === 'cairn' ? new RegistryDB(deps) : name.startsWith(MEMORY_DB_PREFIX) ? new MemoryDB(name.slice(MEMORY_DB_PREFIX.length), deps) : undefined),
    {
      ...options,
      // The engine only writes the derived rows and their backing (open takes the graph from the
      // saved state, or derives it), so logging them would only cost time.
      skipTables: (db, table) => db.startsWith(MEMORY_DB_PREFIX) && DERIVED_TABLES.has(table),
      // The search index snapshots and the saved graph (megabytes at 10k entities, saved seconds
      // after each burst of writes) are kept at close and compaction; after a crash, open brings
      // older ones up to date (a graph of another commit is derived again).
      deferRow: (db, table, key) => db.startsWith(MEMORY_DB_PREFIX) && table === 'meta' && (DEFERRED_META.has(String(key)) || String(key).startsWith(NOTE_TEXTS_KEY)),
    },
  )
  const t1 = performance.now()
  let owned: Embedder | undefined
  const deps = { indexedDB: store.indexedDB, IDBKeyRange: store.IDBKeyRange as unknown as typeof FakeKeyRange & typeof globalThis.IDBKeyRange }
  try {
    const registry = new RegistryDB(deps)
    const known = await registry.memories.toArray()
    registry.close()
    if (known.length > 1) throw new MemoryError('storage_failed', `${dir} holds ${known.length} memories; a folder keeps one`, { dir })
    let memory: Memory
    // the package's own model, loaded here when the memory needs it and none was handed in
    const frozen = known[0]?.retrieval.embedder
    const shipped = !options.embedder && (known[0] ? frozen === STATIC_MODEL_ID : !options.bm25Only && !options.create)
    if (shipped) owned = await createDefaultEmbedder()
    const embedder = options.embedder ?? owned
    if (known[0]) {
      memory = await Memory.open(known[0].id, { ...deps, ...(embedder ? { embedder } : {}) })
    } else if (options.mustExist) {
      throw new MemoryError('not_found', `${dir} holds no memory yet; write to it with cairn mcp or cairn import first`, { dir })
    } else if (options.create) {
      memory = await options.create(deps)
    } else {
      memory = await Memory.create({
        ...deps,
        name: options.name ?? 'agent memory',
        ...(embedder && !options.bm25Only ? { embedder } : {}),
      })
    }
    return {
      memory,
      store,
      timings: { storeMs: Math.round(t1 - t0), memoryMs: Math.round(performance.now() - t1) },
      async close() {
        await memory.close()
        store.close()
        await owned?.dispose?.()
      },
    }
  } catch (e) {
    store.close()
    await owned?.dispose?.().catch(() => undefined)
    throw e
  }
}
