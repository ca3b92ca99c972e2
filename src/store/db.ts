// IndexedDB layout (Dexie). One database lists the memories; each memory has its own database,
// so deleting or migrating a memory never touches another.
import Dexie, { type Table } from 'dexie'
import type { IndexedDBFactory } from './indexeddb-factory'
import type { Alias, AppendixFile, ConnectionRecord, Entity, MemoryInfo, MergeProposal, Observation, Relationship } from '../core/types'

/** An entity row as stored: its backing notes are rows of `entityNotes`, not a list in the row. */
export type StoredEntity = Omit<Entity, 'observations'>
/** A relationship row as stored: its backing notes are rows of `relationshipNotes`. */
export type StoredRelationship = Omit<Relationship, 'observations'>

/** One note backing one entity or stated edge; the pair is the key. */
export interface BackingRow {
  key: string
  slug: string
}

export type { IndexedDBFactory } from './indexeddb-factory'

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
export interface JournalRow {
  /** `observation:<slug>` or `aliases`. */
  key: string
  /** Which commit wrote the row, so clearing an older commit's row never clears a newer one. */
  stamp: string
}

export class MemoryDB extends Dexie {
  meta!: Table<MetaRow, string>
  connections!: Table<ConnectionRecord, string>
  observations!: Table<Observation, string>
  entities!: Table<StoredEntity, string>
  relationships!: Table<StoredRelationship, string>
  entityNotes!: Table<BackingRow, [string, string]>
  relationshipNotes!: Table<BackingRow, [string, string]>
  aliases!: Table<Alias, string>
  proposals!: Table<MergeProposal, string>
  files!: Table<AppendixFile, string>
  fileBytes!: Table<FileBytes, string>
  /** The memory's sync document as an append-only log of Yjs updates, compacted on open. */
  docUpdates!: Table<DocUpdateRow, number>
  /** The commit journal (see `JournalRow`); the table keeps its first name. */
  unmirrored!: Table<JournalRow, string>

  /** The IndexedDB this memory lives in, for the registry row beside it. */
  readonly deps: IndexedDBFactory

  constructor(memoryId: string, deps: IndexedDBFactory) {
    super(`cairn-memory-${memoryId}`, dexieOptions(deps))
    this.deps = { ...(deps.indexedDB ? { indexedDB: deps.indexedDB } : {}), ...(deps.IDBKeyRange ? { IDBKeyRange: deps.IDBKeyRange } : {}) }
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
    // Backing notes move out of the derived rows: a row listing every note that names an entity
    // was rewritten whole on each write to it. Existing memories are split in place.
    this.version(4)
      .stores({ entityNotes: '[key+slug]', relationshipNotes: '[key+slug]' })
      .upgrade(async (tx) => {
        for (const [rows, notes] of [['entities', 'entityNotes'], ['relationships', 'relationshipNotes']] as const) {
          const pairs: BackingRow[] = []
          await tx.table(rows).toCollection().modify((row: { key: string; observations?: unknown }) => {
            if (Array.isArray(row.observations)) for (const slug of row.observations) if (typeof slug === 'string') pairs.push({ key: row.key, slug })
            delete row.observations
          })
          await tx.table(notes).bulkPut(pairs)
        }
      })
  }
}

function dexieOptions(deps: IndexedDBFactory): { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange } {
  const opts: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange } = {}
  if (deps.indexedDB) opts.indexedDB = deps.indexedDB
  if (deps.IDBKeyRange) opts.IDBKeyRange = deps.IDBKeyRange
  return opts
}
