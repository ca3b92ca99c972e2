// Every write an open memory makes to its database. A change to the graph comes here whole: the
// engine previews it on the graph, saves it here in one transaction, and applies it to the live graph only once this has
// resolved: a read never sees a change that is not committed, and a failed save leaves nothing.
import type { Table } from 'dexie'
import { requireLiveConnection } from '../core/access'
import { DERIVATION_RULES, type GraphDelta } from '../core/graph'
import type { Alias, AppendixFile, ConnectionRecord, MemoryInfo, MergeProposal, Observation } from '../core/types'
import { hasValidity } from '../core/validity'
import type { MemoryDB, JournalRow } from './db'
import { derivedTables, persistDelta } from './derived-rows'
import { DERIVATION_KEY } from './import-pieces'
import { storageError, stored } from './storage-error'

export const VERSION_KEY = 'version'
/**
 * Set once a note carrying world time (core/validity) is stored, never cleared: an open of a
 * memory without it needs no timeline, so it does not wait for every note's text.
 */
export const VALIDITY_KEY = 'hasValidity'

export interface GraphCommit {
  /** The memory's commit version after this one. */
  version: number
  /** The derived entities, edges and backing that change. */
  delta: GraphDelta
  observations?: { put: readonly Observation[]; delete: readonly string[] }
  /** The whole alias map after the change, when it changed. */
  aliases?: readonly Alias[]
  proposals?: readonly MergeProposal[]
  /** Journal rows of a local commit, until its sync document update is saved. */
  journal?: readonly JournalRow[]
  /** Journal keys a remote change settles: what the document holds now stands for them. */
  settled?: readonly string[]
  /** The connection the change comes through, if any: see `Through`. */
  through?: Through
}

/**
 * The id of the connection a change comes through. The change is stored only if the stored
 * connection is live when its transaction runs: another instance's revoke (another tab, worker
 * or `Memory` on the same database) commits before or after it, never between a check and the
 * write, so once `revoke()` resolves no instance stores a change through that connection.
 */
export type Through = string | undefined

/** The tables a change's transaction needs: the connections too when it comes through one. */
function withConnections(db: MemoryDB, tables: Table[], through: Through): Table[] {
  return through === undefined ? tables : [...tables, db.connections]
}

/** Inside the change's transaction: refuses it (rolling it back) if its connection is revoked. */
async function requireThrough(db: MemoryDB, through: Through): Promise<void> {
  if (through !== undefined) requireLiveConnection(through, await db.connections.get(through))
}

export async function saveCommit(db: MemoryDB, c: GraphCommit): Promise<void> {
  try {
    await db.transaction('rw', withConnections(db, [db.observations, ...derivedTables(db), db.aliases, db.proposals, db.meta, db.unmirrored], c.through), async () => {
      await requireThrough(db, c.through)
      await db.meta.put({ key: VERSION_KEY, value: c.version })
      if (c.settled?.length) await db.unmirrored.bulkDelete([...c.settled])
      if (c.observations?.put.length) await db.observations.bulkPut([...c.observations.put])
      if (c.observations?.put.some(hasValidity)) await db.meta.put({ key: VALIDITY_KEY, value: true })
      if (c.observations?.delete.length) await db.observations.bulkDelete([...c.observations.delete])
      if (c.aliases) {
        await db.aliases.clear()
        await db.aliases.bulkPut([...c.aliases])
      }
      if (c.proposals?.length) await db.proposals.bulkPut([...c.proposals])
      await persistDelta(db, c.delta)
      if (c.journal?.length) await db.unmirrored.bulkPut([...c.journal])
    })
  } catch (err) {
    throw storageError(err)
  }
}

// ---- the other writes of an open memory: each one transaction, each a storage error on failure

/** The meta rows of the state saved for a quick open (see store/open-state). */
export const INDEX_SNAPSHOT_KEY = 'entityIndex'
export const NOTE_INDEX_SNAPSHOT_KEY = 'noteIndex'
/**
 * The derived graph, packed (see store/open-state) and saved with the index snapshots and the
 * notes' texts (`NOTE_TEXTS_KEY`): open reads this one row instead of every observation row,
 * and takes the graph as it is instead of deriving it.
 */
export const GRAPH_SNAPSHOT_KEY = 'derivedGraph'
/** The prefix of the meta rows of the texts saved with the open state, part by part (see store/open-state). */
export const NOTE_TEXTS_KEY = 'derivedGraphTexts:'
/** The meta row of the entity names' blocks of the saved state (see store/open-state `SavedNameRow`). */
export const NAME_BLOCKS_KEY = 'derivedGraphNames'
/** The meta row of the single-valued relationship types (a `SingleValuedSetting`). */
export const SINGLE_VALUED_META_KEY = 'singleValued'
/** The meta row of the memory's own `MemoryInfo`. */
export const INFO_KEY = 'info'
/** Journal rows dropped per transaction once mirrored. */
const JOURNAL_ROWS_PER_PART = 1000

/** The open state of one save: both index snapshots, the packed graph with its text parts, and its name blocks. */
export interface OpenStateSave {
  entityIndex: unknown
  noteIndex: unknown
  /** Undefined when the graph could not be packed: then no older state may stand for this save. */
  state?: { state: unknown; texts: ReadonlyArray<{ part: number }>; names?: unknown }
}

export function saveOpenState(db: MemoryDB, save: OpenStateSave): Promise<void> {
  const { state } = save
  return stored(() =>
    db.transaction('rw', db.meta, async () => {
      await db.meta.bulkPut([
        { key: INDEX_SNAPSHOT_KEY, value: save.entityIndex },
        { key: NOTE_INDEX_SNAPSHOT_KEY, value: save.noteIndex },
      ])
      // without a state of this save, an older one must not stand for it
      await db.meta.where(':id').startsWith(NOTE_TEXTS_KEY).delete()
      if (state) {
        await db.meta.put({ key: GRAPH_SNAPSHOT_KEY, value: state.state })
        // a part at a time: each put copies its value at once, and the parts of 100,000 notes
        // together are tens of MB, a copy that held the worker for a second
        for (const part of state.texts) await db.meta.put({ key: `${NOTE_TEXTS_KEY}${part.part}`, value: part })
      } else await db.meta.delete(GRAPH_SNAPSHOT_KEY)
      if (state?.names) await db.meta.put({ key: NAME_BLOCKS_KEY, value: state.names })
      else await db.meta.delete(NAME_BLOCKS_KEY)
    }),
  )
}

/** A new appendix file: its record and bytes together. */
export function saveFile(db: MemoryDB, record: AppendixFile, data: Uint8Array, through?: Through): Promise<void> {
  return stored(() =>
    db.transaction('rw', withConnections(db, [db.files, db.fileBytes], through), async () => {
      await requireThrough(db, through)
      await db.files.add(record)
      await db.fileBytes.put({ path: record.path, data })
    }),
  )
}

/** Files and rejected pairs from another copy of the memory: they touch no derived row. */
export function saveExtras(db: MemoryDB, files: ReadonlyArray<{ file: AppendixFile; bytes: Uint8Array }>, proposals: readonly MergeProposal[]): Promise<void> {
  return stored(() =>
    db.transaction('rw', [db.files, db.fileBytes, db.proposals], async () => {
      for (const { file, bytes } of files) {
        await db.files.put(file)
        await db.fileBytes.put({ path: file.path, data: bytes })
      }
      if (proposals.length) await db.proposals.bulkPut([...proposals])
    }),
  )
}

/** A consolidation's result: the open proposals `stale` replaced by `found`. */
export function replaceProposals(db: MemoryDB, stale: readonly string[], found: readonly MergeProposal[], through?: Through): Promise<void> {
  return stored(() =>
    db.transaction('rw', withConnections(db, [db.proposals], through), async () => {
      await requireThrough(db, through)
      await db.proposals.bulkDelete([...stale])
      await db.proposals.bulkPut([...found])
    }),
  )
}

/** One proposal's new status. */
export function saveProposal(db: MemoryDB, proposal: MergeProposal, through?: Through): Promise<void> {
  return stored(() =>
    db.transaction('rw', withConnections(db, [db.proposals], through), async () => {
      await requireThrough(db, through)
      await db.proposals.put(proposal)
    }),
  )
}

/** One meta row (the memory's info, its single-valued types); through a connection, refused once it is revoked. */
export function saveMeta(db: MemoryDB, key: string, value: unknown, through?: Through): Promise<void> {
  if (!through) return stored(() => db.meta.put({ key, value }).then(() => undefined))
  return stored(() =>
    db.transaction('rw', withConnections(db, [db.meta], through), async () => {
      await requireThrough(db, through)
      await db.meta.put({ key, value })
    }),
  )
}

/**
 * The last transaction of an import written in pieces (store/import-pieces): the version, the
 * aliases, the rejected pairs and the aliases' journal row, over the tables it names.
 */
export function importCommit(db: MemoryDB, c: { version: number; hasValidity: boolean; aliases: readonly Alias[]; proposals: readonly MergeProposal[]; journal: readonly JournalRow[] }): { commit: () => Promise<void>; commitTables: Table[] } {
  const commit = async () => {
    await db.meta.put({ key: VERSION_KEY, value: c.version })
    if (c.hasValidity) await db.meta.put({ key: VALIDITY_KEY, value: true })
    await db.aliases.bulkPut([...c.aliases])
    if (c.proposals.length) await db.proposals.bulkPut([...c.proposals])
    if (c.journal.length) await db.unmirrored.bulkPut([...c.journal])
  }
  return { commit, commitTables: [db.aliases, db.proposals, db.meta, db.unmirrored] }
}

/**
 * Drops journal rows whose document update is now saved, unless a later commit rewrote them;
 * a part at a time: the 100,000 rows of a large import, in one transaction, held the worker
 * for seconds issuing their requests. A row left by a part that failed is harmless: the next
 * binding lets it win again, with the same value.
 */
export async function dropMirrored(db: MemoryDB, rows: readonly JournalRow[]): Promise<void> {
  for (let at = 0; at < rows.length; at += JOURNAL_ROWS_PER_PART) {
    const part = rows.slice(at, at + JOURNAL_ROWS_PER_PART)
    await db.transaction('rw', db.unmirrored, async () => {
      const current = await db.unmirrored.bulkGet(part.map((r) => r.key))
      const done = part.filter((r, i) => current[i]?.stamp === r.stamp).map((r) => r.key)
      if (done.length) await db.unmirrored.bulkDelete(done)
    })
  }
}

/** Marks a visibility change this device still owes the memory's sync document. */
export const VISIBILITY_PENDING_KEY = 'visibilityToShare'

/** A new memory's own rows: its info and the derivation rules its (empty) rows follow; `owed`: a visibility its sync document must be told. */
export function saveNewMemory(db: MemoryDB, info: MemoryInfo, owed: boolean): Promise<void> {
  const rows = [{ key: INFO_KEY, value: info }, { key: DERIVATION_KEY, value: DERIVATION_RULES }, ...(owed ? [{ key: VISIBILITY_PENDING_KEY, value: true }] : [])]
  return stored(() => db.meta.bulkPut(rows).then(() => undefined))
}

/** The memory's info after a visibility change; `owed`: this device's change, for its sync document. */
export function saveInfo(db: MemoryDB, info: MemoryInfo, owed: boolean): Promise<void> {
  return stored(() =>
    db.transaction('rw', db.meta, async () => {
      await db.meta.put({ key: INFO_KEY, value: info })
      if (owed) await db.meta.put({ key: VISIBILITY_PENDING_KEY, value: true })
    }),
  )
}

/** Visibility owed to the sync document is now in it. */
export function clearVisibilityOwed(db: MemoryDB): Promise<void> {
  return stored(() => db.meta.delete(VISIBILITY_PENDING_KEY))
}

/**
 * Connections made, updated, revoked or taken in from the sync document. A revoke is never
 * undone: a row stored revoked stays revoked, whatever an instance that had not heard of it puts.
 * Returns the rows as stored.
 */
export function saveConnections(db: MemoryDB, rows: readonly ConnectionRecord[]): Promise<ConnectionRecord[]> {
  return stored(() =>
    db.transaction('rw', db.connections, async () => {
      const before = await db.connections.bulkGet(rows.map((r) => r.id))
      const after = rows.map((r, i) => (before[i]?.revokedAt && !r.revokedAt ? { ...r, revokedAt: before[i].revokedAt } : r))
      await db.connections.bulkPut(after)
      return after
    }),
  )
}

/** A new connection: fails if its id is taken. */
export function addConnection(db: MemoryDB, record: ConnectionRecord): Promise<void> {
  return stored(() => db.connections.add(record).then(() => undefined))
}

/** When a connection was last used; a lost stamp costs nothing, so this one is not a storage error. */
export function stampConnection(db: MemoryDB, id: string, lastUsedAt: string): Promise<void> {
  return db.connections.update(id, { lastUsedAt }).then(() => undefined)
}
