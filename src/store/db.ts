// IndexedDB layout (Dexie). One database lists the memories; each memory has its own database,
// so deleting or migrating a memory never touches another.
import Dexie, { type Table } from 'dexie'
import type { Alias, AppendixFile, Connection, Entity, MemoryInfo, MergeProposal, Observation, Relationship } from '../core/types'

export interface IndexedDBFactory {
  indexedDB?: IDBFactory
  IDBKeyRange?: typeof IDBKeyRange
}

export interface FileBytes {
  path: string
  data: Uint8Array
}

export interface MetaRow {
  key: string
  value: unknown
}

export class RegistryDB extends Dexie {
  memories!: Table<MemoryInfo, string>
  constructor(deps: IndexedDBFactory) {
    super('cairn', dexieOptions(deps))
    this.version(1).stores({ memories: 'id, name' })
  }
}

export interface DocUpdateRow {
  seq?: number
  update: Uint8Array
}

/**
 * A local commit whose sync-document update may not be saved yet. Written in the commit's own
 * transaction and removed once the document update is on disk, so a crash in between cannot
 * let the older document undo the commit when the memory is next bound to it.
 */
export interface UnmirroredRow {
  /** `observation:<slug>` or `aliases`. */
  key: string
  /** Which commit wrote the row, so clearing an older commit's row never clears a newer one. */
  stamp: string
}

export class MemoryDB extends Dexie {
  meta!: Table<MetaRow, string>
  connections!: Table<Connection, string>
  observations!: Table<Observation, string>
  entities!: Table<Entity, string>
  relationships!: Table<Relationship, string>
  aliases!: Table<Alias, string>
  proposals!: Table<MergeProposal, string>
  files!: Table<AppendixFile, string>
  fileBytes!: Table<FileBytes, string>
  /** The memory's sync document as an append-only log of Yjs updates, compacted on open. */
  docUpdates!: Table<DocUpdateRow, number>
  unmirrored!: Table<UnmirroredRow, string>

  constructor(memoryId: string, deps: IndexedDBFactory) {
    super(`cairn-memory-${memoryId}`, dexieOptions(deps))
    this.version(1).stores({
      meta: 'key',
      connections: 'id, tokenHash, agent',
      observations: 'slug, category, observedAt, *tags',
      entities: 'key, type',
      relationships: 'key, source, target',
      aliases: 'variant, canonical',
      proposals: 'id, status',
      files: 'path',
      fileBytes: 'path',
    })
    this.version(2).stores({ docUpdates: '++seq' })
    this.version(3).stores({ unmirrored: 'key' })
  }
}

function dexieOptions(deps: IndexedDBFactory): { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange } {
  const opts: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange } = {}
  if (deps.indexedDB) opts.indexedDB = deps.indexedDB
  if (deps.IDBKeyRange) opts.IDBKeyRange = deps.IDBKeyRange
  return opts
}
