// The sync document's local persistence, in the memory's own Dexie database: every update is
// appended as it happens, and the log is rewritten when the memory opens with many rows, so a
// device that was offline for days still holds all it wrote and merges cleanly on reconnect.
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import type { DocUpdateRow, MemoryDB } from '../store/db'
import { createMemoryDoc } from './memory-doc'
import { storageError } from '../store/storage-error'
import { singleStructContent } from './update-split'
import { nextTurn } from './turns'
import { dependenciesOf, structsOf, writeStruct } from './yjs-internals'

/** Small rows (single writes) beyond which opening rewrites the log. */
const COMPACT_AFTER = 64

/**
 * The size the log's rows are cut to when it is rewritten, and about how much of it a load
 * applies in one task: a large document applied in one go would hold the worker (and every
 * recall asked meanwhile) for seconds.
 */
export const ROW_BYTES = 1024 * 1024

/** A row of several structs this much larger than ROW_BYTES (a whole document as a server sent it) is cut at the next open. */
const OVERSIZED_ROW = 4 * ROW_BYTES

/** Rows of the log read at a time. */
const ROWS_PER_READ = 8

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
  let last = 0
  let small = 0
  let oversized = false
  // each read yields the worker while it waits, and the rows are applied in turns
  for await (const rows of rowsAfter(db, 0)) {
    await applyStoredRows(doc, rows, nextTurn)
    last = rows[rows.length - 1]!.seq!
    for (const r of rows) {
      // rows a rewrite or a first write left are about ROW_BYTES each: only the small ones
      // (single writes) count toward the next rewrite
      if (r.update.byteLength < ROW_BYTES / 8) small++
      else if (r.update.byteLength > OVERSIZED_ROW && singleStructContent(r.update) === null) oversized = true
    }
  }
  if (last === 0) return doc
  loadedSeq.set(doc, last)
  if (small > COMPACT_AFTER || oversized) {
    const rewritten = await documentRows(doc, ROW_BYTES, nextTurn)
    await db.transaction('rw', db.docUpdates, async () => {
      await db.docUpdates.where('seq').belowOrEqual(last).delete()
      const seqs = await db.docUpdates.bulkAdd(rewritten.map((update) => ({ update })), { allKeys: true })
      loadedSeq.set(doc, seqs[seqs.length - 1]!)
    })
  }
  return doc
}

/**
 * The log's rows after `seq`, in order, a few at a time: a read's values are copied into the
 * worker at once, so a large log read whole would hold it for the whole copy.
 */
export async function* rowsAfter(db: MemoryDB, seq: number): AsyncGenerator<DocUpdateRow[]> {
  for (let last = seq; ; ) {
    const rows = await db.docUpdates.where('seq').above(last).limit(ROWS_PER_READ).toArray()
    if (rows.length) yield rows
    if (rows.length < ROWS_PER_READ) return
    last = rows[rows.length - 1]!.seq!
  }
}

/**
 * Applies rows of the log in order, as stored (`STORED_ORIGIN`, so they are not saved again):
 * rows of up to ROW_BYTES together in one transaction (not merged first: `Y.mergeUpdates` of a
 * large log costs far more than applying its rows), and `pause` between such groups, so the worker answers what
 * waits. `stopped` ends it early (a tab that left).
 */
export async function applyStoredRows(doc: Y.Doc, rows: ReadonlyArray<{ update: Uint8Array }>, pause: () => Promise<void>, stopped = () => false): Promise<void> {
  for (let at = 0; at < rows.length; ) {
    if (at > 0) await pause()
    if (stopped()) return
    const from = at
    let bytes = 0
    doc.transact(() => {
      while (at < rows.length && (at === from || bytes + rows[at]!.update.byteLength <= ROW_BYTES)) {
        bytes += rows[at]!.update.byteLength
        Y.applyUpdate(doc, rows[at]!.update, LOADED)
        at++
      }
    }, LOADED)
  }
}

type Struct = Y.Item | Y.GC

/** One client's run of structs in the row being written. */
interface Run {
  clock: number
  count: number
  body: Y.UpdateEncoderV1
}

/**
 * `doc` as updates of about `rowBytes` each which, applied in order, give the same document
 * with no row waiting on a later one: each row holds a run of structs of each client, and a
 * struct goes in only once what it builds on (its neighbours at creation, its parent) is in
 * this row or an earlier one. Yjs orders the structs within one update itself. Taking the
 * client whose next struct is ready always progresses, since a struct only builds on structs
 * made before it; the deletions go in the last row. Written from the structs the loaded
 * document holds, which are decoded already; decoding and ordering one large update would cost far more.
 */
export async function documentRows(doc: Y.Doc, rowBytes = ROW_BYTES, pause: () => Promise<void> = async () => undefined): Promise<Uint8Array[]> {
  const clients = [...structsOf(doc)].filter(([, structs]) => structs.length > 0)
  /** Per client: how many of its structs are placed, and the clock up to which. */
  const next = new Map<number, number>(clients.map(([client]) => [client, 0]))
  const placed = new Map<number, number>(clients.map(([client, structs]) => [client, structs[0]!.id.clock]))
  const isPlaced = (id: Y.ID | null): boolean => !id || id.clock < (placed.get(id.client) ?? 0)
  const ready = (struct: Struct): boolean => dependenciesOf(struct).every(isPlaced)
  const rows: Uint8Array[] = []
  let runs = new Map<number, Run>()
  let bytes = 0
  const flush = () => {
    rows.push(
      encoding.encode((e) => {
        encoding.writeVarUint(e, runs.size)
        for (const [client, run] of runs) {
          encoding.writeVarUint(e, run.count)
          encoding.writeVarUint(e, client)
          encoding.writeVarUint(e, run.clock)
          encoding.writeUint8Array(e, run.body.toUint8Array())
        }
        // no deletions: they go in the last row
        encoding.writeVarUint(e, 0)
      }),
    )
    runs = new Map()
    bytes = 0
  }
  let left = clients.reduce((n, [, structs]) => n + structs.length, 0)
  while (left > 0) {
    let progressed = false
    for (const [client, structs] of clients) {
      let i = next.get(client)!
      while (i < structs.length && ready(structs[i]!)) {
        const struct = structs[i]!
        let run = runs.get(client)
        if (!run) runs.set(client, (run = { clock: struct.id.clock, count: 0, body: new Y.UpdateEncoderV1() }))
        bytes += writeStruct(run.body, struct)
        run.count++
        placed.set(client, struct.id.clock + struct.length)
        i++
        left--
        progressed = true
        if (bytes >= rowBytes) {
          flush()
          await pause()
        }
      }
      next.set(client, i)
    }
    // not a document Yjs makes (a struct building on one that never comes): kept whole
    if (!progressed) return [Y.encodeStateAsUpdate(doc)]
  }
  if (runs.size) flush()
  // every struct is placed: what is left is the delete set (and anything Yjs holds pending)
  rows.push(Y.encodeStateAsUpdate(doc, Y.encodeStateVector(doc)))
  return rows
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
