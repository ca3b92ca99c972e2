// An import written in pieces, and put back if it never finished.
//
// Chromium writes an undo entry for each key a readwrite transaction writes, and deletes them
// once it commits. After a large import in one transaction, millions of those entries and
// their deletions stay in the store, and every later first open of the origin's IndexedDB reads
// through them looking for unfinished transactions. Written in transactions of a few hundred kB,
// the entries go away with their deletions. So an import goes in pieces, between a marker naming its
// notes and a last transaction that commits it (the version, the aliases, the marker's
// removal); an open that finds the marker left behind takes those notes out again, and the
// memory is as it was before the import.
import { DERIVATION_RULES } from '../core/graph'
import type { Table } from 'dexie'
import type { Entity, Observation, Relationship } from '../core/types'
import type { BackingRow, JournalRow, MemoryDB } from './db'
import { derivedTables, entityRow, relationshipRow } from './derived-rows'

/** The meta row naming the notes of an import that has not committed yet. */
export const IMPORT_PENDING_KEY = 'importPending'
/** The rules the derived rows were written by; gone when they must be rewritten. */
export const DERIVATION_KEY = 'derivationRules'
/** Bytes per transaction as `rowBytes` counts them: a few hundred kB, small enough that the undo entries go with their deletions (see above). */
export const PIECE_BYTES = 384 * 1024
/** Rows deleted per transaction (each delete's undo entry holds the row it deletes). */
const DELETES_PER_PIECE = 200

export interface ImportPending {
  /** The slugs the import adds. */
  slugs: string[]
  /** The keys of the journal rows it adds beside them. */
  journal: string[]
  /**
   * Those of the keys that had a row already (a note deleted here, its deletion not yet in the
   * sync document, then imported again), as they were: put back with the import.
   */
  journalBefore?: JournalRow[]
}

/**
 * About how many bytes a row adds to a transaction: its JSON text, two bytes a character (keys
 * are stored so), and the keys beside it (the row's own, an existence entry, and an entry per
 * index, each repeating the row's key, and an undo entry for each).
 */
export function rowBytes(row: unknown, indexes = 0): number {
  return JSON.stringify(row).length * 2 + 512 * (1 + indexes)
}

/** Index entries per row of each table written in pieces (see store/db). */
const OBSERVATION_INDEXES = 3
const ENTITY_INDEXES = 1
const RELATIONSHIP_INDEXES = 2
export const observationBytes = (o: Observation): number => rowBytes(o, OBSERVATION_INDEXES)

/** `rows` in runs of at most `budget` bytes (a row larger than the budget is a run of its own). */
export function piecesOf<T>(rows: readonly T[], bytes: (row: T) => number, budget = PIECE_BYTES): T[][] {
  const pieces: T[][] = []
  let piece: T[] = []
  let size = 0
  for (const row of rows) {
    const b = bytes(row)
    if (piece.length && size + b > budget) {
      pieces.push(piece)
      piece = []
      size = 0
    }
    piece.push(row)
    size += b
  }
  if (piece.length) pieces.push(piece)
  return pieces
}

export interface ImportPlan {
  observations: readonly Observation[]
  /** The journal row of each observation, in the same order. */
  journal: readonly JournalRow[]
  /** The whole graph after the import: the derived rows are replaced with it. */
  entities: readonly Entity[]
  relationships: readonly Relationship[]
  edgeBacking: readonly BackingRow[]
  /** The commit: runs in the last transaction, over `commitTables` and meta. */
  commit: () => Promise<void>
  commitTables: Table[]
}

/**
 * Writes `plan` in transactions of about `PIECE_BYTES` each. Rejects with the storage error
 * of a piece that failed, after putting back what was written (or leaving the marker, so the
 * next open does).
 */
export async function importInPieces(db: MemoryDB, plan: ImportPlan): Promise<void> {
  const pending: ImportPending = { slugs: plan.observations.map((o) => o.slug), journal: plan.journal.map((j) => j.key) }
  await db.transaction('rw', [db.meta, db.unmirrored], async () => {
    // the journal's keys read whole rather than one get per imported note: it holds only what
    // the sync document has yet to take (without sync, every change since the memory began)
    const keys = new Set(pending.journal)
    const replaced = (await db.unmirrored.toCollection().primaryKeys()).filter((key) => keys.has(key))
    if (replaced.length) pending.journalBefore = (await db.unmirrored.bulkGet(replaced)).filter((row): row is JournalRow => row !== undefined)
    // stored apart from the rows as one value: Chromium keeps a value this large as a file
    await db.meta.put({ key: IMPORT_PENDING_KEY, value: pending })
  })
  try {
    const rows = plan.observations.map((o, i) => ({ o, j: plan.journal[i]! }))
    for (const piece of piecesOf(rows, (r) => observationBytes(r.o) + rowBytes(r.j))) {
      await db.transaction('rw', [db.observations, db.unmirrored], async () => {
        await db.observations.bulkPut(piece.map((r) => r.o))
        await db.unmirrored.bulkPut(piece.map((r) => r.j))
      })
    }
    await writeDerivedInPieces(db, plan.entities, plan.relationships, plan.edgeBacking)
    await db.transaction('rw', [...new Set([...plan.commitTables, db.meta])], async () => {
      await plan.commit()
      await db.meta.put({ key: DERIVATION_KEY, value: DERIVATION_RULES })
      await db.meta.delete(IMPORT_PENDING_KEY)
    })
  } catch (err) {
    // what could not be put back now is put back by the next open, from the marker
    await rollBackImport(db, pending).catch(() => undefined)
    throw err
  }
}

/**
 * Replaces every derived row with the given graph's, in pieces. The rules mark is removed first
 * and is the caller's to put back once all is written: until then, an open rewrites the rows.
 */
export async function writeDerivedInPieces(db: MemoryDB, entities: readonly Entity[], relationships: readonly Relationship[], edgeBacking: readonly BackingRow[]): Promise<void> {
  await db.meta.delete(DERIVATION_KEY)
  for (const table of derivedTables(db)) await clearInPieces(db, table)
  for (const piece of piecesOf(entities.map(entityRow), (r) => rowBytes(r, ENTITY_INDEXES))) await db.entities.bulkPut(piece)
  for (const piece of piecesOf(relationships.map(relationshipRow), (r) => rowBytes(r, RELATIONSHIP_INDEXES))) await db.relationships.bulkPut(piece)
  const entityBacking = entities.flatMap((e) => e.observations.map((slug) => ({ key: e.key, slug })))
  for (const piece of piecesOf(entityBacking, (r) => rowBytes(r))) await db.entityNotes.bulkPut(piece)
  for (const piece of piecesOf(edgeBacking, (r) => rowBytes(r))) await db.relationshipNotes.bulkPut(piece)
}

/** Empties `table` a piece at a time: a clear keeps every row it removes in its undo log. */
async function clearInPieces(db: MemoryDB, table: Table): Promise<void> {
  for (;;) {
    const cleared = await db.transaction('rw', table, async () => {
      const keys = await table.limit(DELETES_PER_PIECE).primaryKeys()
      if (keys.length) await table.bulkDelete(keys)
      return keys.length
    })
    if (cleared < DELETES_PER_PIECE) return
  }
}

/**
 * Removes the notes of an import that did not commit, puts back the journal rows it replaced,
 * and marks the derived rows for rewriting (the open that follows derives the graph from the
 * rows and writes them again).
 */
export async function rollBackImport(db: MemoryDB, pending: ImportPending): Promise<void> {
  const strings = (list: unknown) => (Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string') : [])
  const slugs = strings(pending?.slugs)
  const journal = strings(pending?.journal)
  const journalBefore = Array.isArray(pending?.journalBefore) ? pending.journalBefore.filter((r) => typeof r?.key === 'string' && typeof r.stamp === 'string') : []
  for (let at = 0; at < Math.max(slugs.length, journal.length); at += DELETES_PER_PIECE) {
    await db.transaction('rw', [db.observations, db.unmirrored], async () => {
      await db.observations.bulkDelete(slugs.slice(at, at + DELETES_PER_PIECE))
      await db.unmirrored.bulkDelete(journal.slice(at, at + DELETES_PER_PIECE))
    })
  }
  await db.transaction('rw', [db.meta, db.unmirrored], async () => {
    if (journalBefore.length) await db.unmirrored.bulkPut(journalBefore)
    await db.meta.delete(DERIVATION_KEY)
    await db.meta.delete(IMPORT_PENDING_KEY)
  })
}

/** Web Locks where there are some (browsers, in pages and workers); Node has none. */
function locks(): { request(name: string, fn: () => Promise<unknown>): Promise<unknown>; query(): Promise<{ held?: Array<{ name?: string }> }> } | undefined {
  return (globalThis as { navigator?: { locks?: ReturnType<typeof locks> } }).navigator?.locks
}

const lockName = (memoryId: string) => `cairn-import:${memoryId}`

/** Runs `write` holding this memory's import lock, so another tab's open leaves the import alone. */
export async function whileImporting<T>(memoryId: string, write: () => Promise<T>): Promise<T> {
  const l = locks()
  return l ? (l.request(lockName(memoryId), write) as Promise<T>) : write()
}

/** Whether an import of this memory is being written right now (by another tab of this browser). */
export async function importUnderway(memoryId: string): Promise<boolean> {
  const l = locks()
  if (!l) return false
  const { held = [] } = await l.query()
  return held.some((lock) => lock.name === lockName(memoryId))
}
