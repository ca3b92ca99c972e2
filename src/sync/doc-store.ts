// The sync document's local persistence, in the memory's own Dexie database: every update is
// appended as it happens, and the log is merged into one row when the memory opens, so a
// device that was offline for days still holds all it wrote and merges cleanly on reconnect.
import * as Y from 'yjs'
import type { MemoryDB } from '../store/db'
import { createMemoryDoc } from './memory-doc'
import { storageError } from '../store/storage-error'

/** Rows beyond which opening merges the log into one update. */
const COMPACT_AFTER = 64

/** The origin of updates read from the log (here or by another tab), so persisting never re-appends them. */
export const STORED_ORIGIN = Symbol('cairn-doc-store')
const LOADED = STORED_ORIGIN

/** The last log row each loaded document holds, so other tabs' later rows can be read after it. */
const loadedSeq = new WeakMap<Y.Doc, number>()

export function lastLoadedRow(doc: Y.Doc): number {
  return loadedSeq.get(doc) ?? 0
}

export async function loadMemoryDoc(db: MemoryDB): Promise<Y.Doc> {
  const doc = createMemoryDoc()
  const rows = await db.docUpdates.orderBy('seq').toArray()
  if (rows.length === 0) return doc
  // row by row, in one transaction: merging the log into one update first took 14 s of a
  // 100 MB document's load in Chromium, applying it 5 s
  doc.transact(() => {
    for (const row of rows) Y.applyUpdate(doc, row.update, LOADED)
  }, LOADED)
  const last = rows[rows.length - 1]!.seq!
  loadedSeq.set(doc, last)
  if (rows.length > COMPACT_AFTER) {
    await db.transaction('rw', db.docUpdates, async () => {
      await db.docUpdates.where('seq').belowOrEqual(last).delete()
      loadedSeq.set(doc, await db.docUpdates.add({ update: Y.encodeStateAsUpdate(doc) }))
    })
  }
  return doc
}

export interface DocPersistence {
  /**
   * Settles when every update so far is on disk; rejects with the storage failure while some
   * update still could not be saved (each flush and each later update tries those again).
   */
  flush(): Promise<void>
  stop(): void
}

/** Appends each update of `doc` to the log, in order; `onSaved` after each row is written. */
export function persistMemoryDoc(db: MemoryDB, doc: Y.Doc, onSaved?: () => void): DocPersistence {
  let chain: Promise<void> = Promise.resolve()
  // updates refused by storage (a full quota, say), kept to save once there is room again
  let unsaved: Uint8Array[] = []
  let failure: Error | undefined
  const save = async (update: Uint8Array | undefined) => {
    const pending = update ? [...unsaved, update] : unsaved
    if (pending.length === 0) return
    try {
      // the log is merged when read, so the refused updates can go in as one row
      await db.docUpdates.add({ update: pending.length === 1 ? pending[0]! : Y.mergeUpdates(pending) })
      unsaved = []
      failure = undefined
      onSaved?.()
    } catch (err) {
      unsaved = pending
      failure = storageError(err)
    }
  }
  const onUpdate = (update: Uint8Array, origin: unknown) => {
    if (origin === LOADED) return
    chain = chain.then(() => save(update))
  }
  doc.on('update', onUpdate)
  return {
    async flush() {
      chain = chain.then(() => save(undefined))
      await chain
      if (failure) throw failure
    },
    stop() {
      doc.off('update', onUpdate)
    },
  }
}
