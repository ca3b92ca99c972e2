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

/** Small rows (single writes) beyond which opening rewrites the log. */
const COMPACT_AFTER = 64

/**
 * The size the log's rows are cut to when it is rewritten, and about how much of it a load
 * applies in one task: a 100,000-note document applied in one go held the worker (and every
 * recall asked meanwhile) for 5 s.
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
  for await (const rows of rowsAfter(db, 0)) {
    if (last > 0) await nextTurn()
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
 * worker at once (a 100 MB log in one read held it for most of a second).
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
 * rows of up to ROW_BYTES together in one transaction (not merged first: merging took 14 s of
 * a 100 MB document's load), and `pause` between such groups, so the worker answers what
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

/** Structs of one client with consecutive clocks, written out, and the clocks they need of other clients. */
interface Cut {
  client: number
  clock: number
  count: number
  body: Uint8Array
  end: number
  needs: Map<number, number>
}

/**
 * `doc` as updates of about `rowBytes` each, which applied in order give the same document:
 * each client's structs in clock order cut between structs, each cut placed after the cuts of
 * other clients it builds on, and the deletions last. Where cuts of two clients build on each
 * other (edits from several devices interleaved finely), the document is one update, as
 * `Y.encodeStateAsUpdate` writes it: applied out of order, Yjs would hold the early cuts
 * back and re-read them with every later one.
 */
export async function documentRows(doc: Y.Doc, rowBytes = ROW_BYTES, pause: () => Promise<void> = async () => undefined): Promise<Uint8Array[]> {
  const byClient = new Map<number, Cut[]>()
  for (const [client, structs] of doc.store.clients as Map<number, Struct[]>) {
    const cuts: Cut[] = []
    let body = new Y.UpdateEncoderV1()
    let count = 0
    let clock = 0
    let needs = new Map<number, number>()
    const need = (id: Y.ID | null) => {
      if (id && id.client !== client && id.clock + 1 > (needs.get(id.client) ?? 0)) needs.set(id.client, id.clock + 1)
    }
    for (const struct of structs) {
      if (count === 0) clock = struct.id.clock
      if (struct instanceof Y.Item) {
        need(struct.origin)
        need(struct.rightOrigin)
        const parent = struct.parent as { _item?: Y.Item | null } | null
        if (parent?._item) need(parent._item.id)
      }
      struct.write(body, 0)
      count++
      if (encoding.length(body.restEncoder) >= rowBytes) {
        cuts.push({ client, clock, count, body: body.toUint8Array(), end: struct.id.clock + struct.length, needs })
        body = new Y.UpdateEncoderV1()
        count = 0
        needs = new Map()
        await pause()
      }
    }
    if (count) {
      const lastStruct = structs[structs.length - 1]!
      cuts.push({ client, clock, count, body: body.toUint8Array(), end: lastStruct.id.clock + lastStruct.length, needs })
    }
    if (cuts.length) byClient.set(client, cuts)
  }
  // place each client's cuts in order, a cut once what it needs of other clients is placed
  const placed = new Map<number, number>()
  const ordered: Cut[] = []
  const total = [...byClient.values()].reduce((n, cuts) => n + cuts.length, 0)
  const next = new Map([...byClient.keys()].map((client) => [client, 0]))
  const ready = (cut: Cut) => [...cut.needs].every(([client, clock]) => (placed.get(client) ?? 0) >= clock)
  while (ordered.length < total) {
    let progressed = false
    for (const [client, cuts] of byClient) {
      let i = next.get(client)!
      while (i < cuts.length && ready(cuts[i]!)) {
        ordered.push(cuts[i]!)
        placed.set(client, cuts[i]!.end)
        i++
        progressed = true
      }
      next.set(client, i)
    }
    if (!progressed) return [Y.encodeStateAsUpdate(doc)]
  }
  const rows: Uint8Array[] = ordered.map((cut) =>
    encoding.encode((e) => {
      encoding.writeVarUint(e, 1)
      encoding.writeVarUint(e, cut.count)
      encoding.writeVarUint(e, cut.client)
      encoding.writeVarUint(e, cut.clock)
      encoding.writeUint8Array(e, cut.body)
      // no deletions: they go in the last row
      encoding.writeVarUint(e, 0)
    }),
  )
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
