// A durable IndexedDB for Node: an in-process IndexedDB (fake-indexeddb) whose every committed
// transaction is appended to a checksummed log on disk, and reloaded from that log at start.
// It sits below Cairn's Dexie databases as middleware, so every table is kept as the engine
// wrote it: observations, aliases, files, connections, proposals, the index snapshot and the
// memory's registry row (its id).
import { mkdirSync, openSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { deserialize, serialize } from 'node:v8'
import Dexie, { type DBCore, type DBCoreKeyRange, type DBCoreMutateRequest, type DBCoreTransaction, type Table as DexieTable } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { MemoryError } from '../core/errors'
import { decodeRecords, decodeSnapshot, encodeSnapshot, LogWriter, readIfExists, writeAtomically } from './record-log'

export const SNAPSHOT_FILE = 'store.snapshot'
export const LOG_FILE = 'store.log'
/** A snapshot of framed rows (`encodeSnapshot`): the one format read; a folder of any other fails to open, untouched. */
const FORMAT = 'cairn-node-store@2'

/** One row as it was written: its key and its structured-clone bytes. */
type Row = { key: unknown; bytes: Buffer }
type TableRows = Map<string, Row>
type DatabaseRows = Map<string, TableRows>

type Op =
  | { table: string; put: Array<[unknown, Buffer]> }
  | { table: string; del: unknown[] }
  | { table: string; range: DBCoreKeyRange }
type LogRecord = { db: string; ops: Op[] } | { db: string; drop: true }

export interface DurableStoreOptions {
  /** Batch window of fdatasync; 0 syncs every commit. Appends reach the OS at once either way. */
  syncDelayMs?: number
  /** Rewrite the snapshot once the log is this many times its size (default 2)... */
  compactRatio?: number
  /** ...and over this many bytes (default 4 MiB). */
  compactMinBytes?: number
  /** Tables whose rows are not kept (derived data the opener rebuilds from the rest). */
  skipTables?: (db: string, table: string) => boolean
  /**
   * Rows kept only at compaction and close, not at each commit: large caches that are rewritten
   * often and that the opener can rebuild when a crash left an older one. The store holds them
   * itself, encoded, beside the in-process IndexedDB, and answers reads of them by key: megabytes
   * of index snapshot are then never copied into and out of the IndexedDB emulation.
   */
  deferRow?: (db: string, table: string, key: unknown) => boolean
}

export interface DurableIndexedDB {
  readonly indexedDB: IDBFactory
  readonly IDBKeyRange: typeof IDBKeyRange
  /** Names of the databases the store holds. */
  databases(): string[]
  /** Makes every appended commit durable on disk now. */
  sync(): void
  /** Folds the log into a fresh snapshot. */
  compact(): void
  stats(): { logBytes: number; snapshotBytes: number; records: number }
  close(): void
}

const keyId = (key: unknown): string => (typeof key === 'string' ? `s${key}` : typeof key === 'number' ? `n${key}` : `j${JSON.stringify(key)}`)

/**
 * Opens the store in `dir` and loads what it holds into a fresh in-process IndexedDB. The caller
 * reopens its databases through `indexedDB`/`IDBKeyRange` (schemas come from the code that opens
 * them); every change they commit from then on is in the log before the commit's promise resolves.
 */
export async function openDurableIndexedDB(
  dir: string,
  schemas: (dbName: string, deps: { indexedDB: IDBFactory; IDBKeyRange: typeof IDBKeyRange }) => Dexie | undefined,
  options: DurableStoreOptions = {},
): Promise<DurableIndexedDB> {
  mkdirSync(dir, { recursive: true })
  const lock = takeLock(dir)
  const factory = new IDBFactory()
  const deps = { indexedDB: factory as unknown as IDBFactory, IDBKeyRange }
  const state = new Map<string, DatabaseRows>()
  let generation = 0
  let snapshotBytes = 0
  let records = 0

  const snapPath = join(dir, SNAPSHOT_FILE)
  const logPath = join(dir, LOG_FILE)
  const snapBytes = readIfExists(snapPath)
  if (snapBytes) {
    const loaded = readSnapshot(snapBytes, state)
    if (loaded === undefined) {
      lock.release()
      throw new MemoryError('storage_failed', `${snapPath} is not a Cairn store snapshot; move the folder aside to start empty`, { path: snapPath })
    }
    generation = loaded
    snapshotBytes = snapBytes.byteLength
  }
  // The log's first record names its generation; a log left from before the last snapshot is already in it.
  const logBytes = readIfExists(logPath)
  let goodLength = 0
  if (logBytes) {
    const decoded = decodeRecords(logBytes)
    const [head, ...rest] = decoded.records
    const headGen = head ? (deserialize(head) as { generation?: number }).generation : undefined
    if (headGen === generation) {
      goodLength = decoded.goodLength
      for (const body of rest) {
        apply(state, deserialize(body) as LogRecord, factory)
        records++
      }
    }
  }

  // Rows are copied into the in-process IndexedDB when a transaction first touches their table:
  // the engine opens from its saved state, so a restart need not decode thousands of observations
  // and journal rows (nor clone them into the emulation) before they are asked for.
  const filled = new Set<string>()
  let lazy = true
  for (const [name, tables] of state) {
    // rows of tables no longer kept (a folder written before they were skipped) go at the next compaction
    for (const table of [...tables.keys()]) if (options.skipTables?.(name, table)) tables.delete(table)
    const db = schemas(name, deps)
    if (!db) continue
    await db.open()
    lazy &&= rawStores(db.backendDB()) !== undefined
    if (!lazy) {
      // an IndexedDB emulation whose stores cannot be filled in place: copy every row now, through Dexie
      await db.transaction('rw', db.tables, async () => {
        for (const table of db.tables as DexieTable[]) {
          const rows = [...(tables.get(table.name)?.values() ?? [])].filter((r) => !options.deferRow?.(name, table.name, r.key))
          if (!rows.length) continue
          const values = rows.map((r) => deserialize(r.bytes))
          if (table.schema.primKey.keyPath) await table.bulkPut(values)
          else await table.bulkPut(values, rows.map((r) => r.key as never))
        }
      })
    }
    db.close()
  }
  /**
   * Copies the kept rows of `tables` into the stores below `trans`, once per table, synchronously:
   * it runs as the transaction is created, before any request of it, so no read misses a row and a
   * write is never overwritten by an older row. A write to a table always fills it first, so the
   * kept rows of a table not yet filled are still those the store was opened with.
   */
  const fill = (dbName: string, trans: unknown, tables: string[]): void => {
    if (!lazy) return
    for (const table of tables) {
      const id = `${dbName}\u0000${table}`
      if (filled.has(id)) continue
      filled.add(id)
      const rows = state.get(dbName)?.get(table)
      if (!rows?.size) continue
      const store = rawStores((trans as { db?: unknown }).db)?.get(table)
      if (!store) throw new MemoryError('storage_failed', `the in-process IndexedDB has no table ${table} in ${dbName}`, { db: dbName, table })
      for (const row of rows.values()) {
        if (options.deferRow?.(dbName, table, row.key)) continue
        const value = deserialize(row.bytes)
        // a value put into a `++key` table is logged as given, without the key the store generated: put it back
        if (typeof store.keyPath === 'string' && value && typeof value === 'object') withKey(value as Record<string, unknown>, store.keyPath, row.key)
        store.storeRecord({ key: row.key, value }, false)
      }
    }
  }

  let writer: LogWriter
  const startLog = (): void => {
    const head = serialize({ generation })
    if (goodLength === 0) {
      rmSync(logPath, { force: true })
      writer = new LogWriter(openSync(logPath, 'a'), 0, options.syncDelayMs ?? 20)
      writer.append(head)
      writer.sync()
    } else {
      // cut off a torn tail so new records follow the last good one
      truncateSync(logPath, goodLength)
      writer = new LogWriter(openSync(logPath, 'a'), goodLength, options.syncDelayMs ?? 20)
    }
  }
  startLog()

  const compact = (): void => {
    flushDeferred()
    writer.close()
    generation++
    const rows = function* () {
      for (const [db, tables] of state) for (const [table, kept] of tables) for (const { key, bytes } of kept.values()) yield { db, table, key, bytes }
    }
    const bytes = encodeSnapshot({ format: FORMAT, generation }, rows())
    writeAtomically(snapPath, bytes)
    snapshotBytes = bytes.byteLength
    records = 0
    goodLength = 0
    startLog()
  }
  const ratio = options.compactRatio ?? 2
  const minBytes = options.compactMinBytes ?? 4 * 1024 * 1024

  // the latest value of each deferred row, written to the log at compaction and close
  const deferred = new Map<string, { db: string; op: Op }>()
  const deferredId = (db: string, table: string, key: unknown): string => `${db}\u0000${table}\u0000${keyId(key)}`
  /** Drops pending deferred rows that a later delete, clear or drop removed. */
  const forgetDeferred = (record: LogRecord): void => {
    if (!deferred.size) return
    if ('drop' in record) {
      for (const [id, d] of deferred) if (d.db === record.db) deferred.delete(id)
      return
    }
    for (const op of record.ops) {
      if ('del' in op) for (const key of op.del) deferred.delete(deferredId(record.db, op.table, key))
      else if ('range' in op) {
        for (const [id, d] of deferred) {
          const [key] = 'put' in d.op ? d.op.put[0]! : []
          if (d.db === record.db && d.op.table === op.table && (op.range.type === 3 || (op.range.type === 1 ? keyId(op.range.lower) === keyId(key) : inRange(factory, key, op.range)))) deferred.delete(id)
        }
      }
    }
  }
  /** The committed value of a row the store holds itself, decoded afresh so no reader shares it. */
  const heldValue = (db: string, table: string, key: unknown): unknown => {
    const pending = deferred.get(deferredId(db, table, key))
    const bytes = pending && 'put' in pending.op ? pending.op.put[0]![1] : state.get(db)?.get(table)?.get(keyId(key))?.bytes
    return bytes ? deserialize(bytes) : undefined
  }
  const append = (record: LogRecord): void => {
    forgetDeferred(record)
    if (!('drop' in record) && options.deferRow) {
      const now: Op[] = []
      for (const op of record.ops) {
        if (!('put' in op)) {
          now.push(op)
          continue
        }
        const kept = op.put.filter(([key]) => !options.deferRow!(record.db, op.table, key))
        for (const [key, bytes] of op.put) if (kept.length !== op.put.length && options.deferRow(record.db, op.table, key)) deferred.set(deferredId(record.db, op.table, key), { db: record.db, op: { table: op.table, put: [[key, bytes]] } })
        if (kept.length) now.push({ table: op.table, put: kept })
      }
      if (!now.length) return
      record = { db: record.db, ops: now }
    }
    apply(state, record, factory)
    writer.append(serialize(record))
    records++
    if (overgrown()) compact()
  }
  const overgrown = (): boolean => writer.bytes > minBytes && writer.bytes > ratio * snapshotBytes
  const flushDeferred = (): void => {
    for (const { db, op } of deferred.values()) {
      const record: LogRecord = { db, ops: [op] }
      apply(state, record, factory)
      writer.append(serialize(record))
      records++
    }
    deferred.clear()
  }

  const addon = (db: Dexie): void => {
    if ((db as unknown as { _options?: { indexedDB?: unknown } })._options?.indexedDB !== factory) return
    const held: HeldRows = {
      is: (table, key) => options.deferRow?.(db.name, table, key) ?? false,
      get: (table, key) => heldValue(db.name, table, key),
    }
    db.use({ stack: 'dbcore', name: 'cairn-durable-log', create: (down) => logging(down, db.name, append, (t) => options.skipTables?.(db.name, t) ?? false, held, (trans, tables) => fill(db.name, trans, tables)) })
    const drop = db.delete.bind(db)
    db.delete = (async (...args: Parameters<Dexie['delete']>) => {
      await drop(...args)
      append({ db: db.name, drop: true })
    }) as never
  }
  Dexie.addons.push(addon)

  return {
    indexedDB: deps.indexedDB,
    IDBKeyRange,
    databases: () => [...state.keys()],
    sync: () => writer.sync(),
    compact,
    stats: () => ({ logBytes: writer.bytes, snapshotBytes, records }),
    close() {
      const i = Dexie.addons.indexOf(addon)
      if (i >= 0) Dexie.addons.splice(i, 1)
      flushDeferred()
      // the next open then reads one snapshot and a short log instead of folding this one
      if (overgrown()) compact()
      writer.close()
      lock.release()
    },
  }
}

/** Fills `state` from a snapshot file's bytes; returns its generation, or undefined if it is not one. */
function readSnapshot(bytes: Buffer, state: Map<string, DatabaseRows>): number | undefined {
  const put = (db: string, table: string, key: unknown, row: Buffer): void => {
    let tables = state.get(db)
    if (!tables) state.set(db, (tables = new Map()))
    let rows = tables.get(table)
    if (!rows) tables.set(table, (rows = new Map()))
    rows.set(keyId(key), { key, bytes: row })
  }
  const snap = decodeSnapshot(bytes)
  if (snap?.head.format !== FORMAT) return undefined
  for (const row of snap.rows) put(row.db, row.table, row.key, row.bytes)
  return snap.head.generation
}

/**
 * Rows the store keeps itself instead of in the in-process IndexedDB (the deferred ones). They are
 * read by key only, and reads see committed rows: a scan of their table does not list them, nor
 * does a transaction read back its own uncommitted put of one (the engine does neither).
 */
interface HeldRows {
  is(table: string, key: unknown): boolean
  get(table: string, key: unknown): unknown
}

/**
 * The middleware: collects each read-write transaction's mutations and logs them when it
 * completes. Held rows are not passed down: they are logged (and so kept by the store) and read
 * back from the store by key.
 */
function logging(
  down: DBCore,
  dbName: string,
  append: (r: LogRecord) => void,
  skip: (table: string) => boolean,
  held: HeldRows,
  fill: (trans: DBCoreTransaction, tables: string[]) => void,
): DBCore {
  const pending = new WeakMap<DBCoreTransaction, Op[]>()
  return {
    ...down,
    transaction(stores, mode, options) {
      const trans = down.transaction(stores, mode, options)
      fill(trans, stores)
      if (mode === 'readwrite') {
        const ops: Op[] = []
        pending.set(trans, ops)
        const idb = trans as unknown as EventTarget
        // Runs inside the complete event, before the commit's promise settles, so an acknowledged write is on disk.
        idb.addEventListener('complete', () => {
          if (ops.length) append({ db: dbName, ops })
        })
      }
      return trans
    },
    table(name) {
      const table = down.table(name)
      if (skip(name)) return table
      const extractKey = table.schema.primaryKey.extractKey
      return {
        ...table,
        async get(req) {
          return held.is(name, req.key) ? held.get(name, req.key) : table.get(req)
        },
        async getMany(req) {
          const mine = req.keys.map((k) => held.is(name, k))
          if (!mine.includes(true)) return table.getMany(req)
          const rest = req.keys.filter((_, i) => !mine[i])
          const found = rest.length ? await table.getMany({ ...req, keys: rest }) : []
          let next = 0
          return req.keys.map((k, i) => (mine[i] ? held.get(name, k) : found[next++]))
        },
        async mutate(req: DBCoreMutateRequest) {
          if (req.type === 'put' || req.type === 'add') {
            const keyOf = (value: unknown, i: number): unknown => (req.keys?.[i] !== undefined ? req.keys[i] : extractKey ? extractKey(value) : undefined)
            const keys = req.values.map(keyOf)
            const mine = keys.map((k) => k !== undefined && held.is(name, k))
            if (mine.includes(true)) return mutateHeld(req, keys, mine)
          }
          const res = await table.mutate(req)
          const ops = pending.get(req.trans)
          if (!ops) return res
          if (req.type === 'add' || req.type === 'put') {
            const keys = res.results ?? []
            const put: Array<[unknown, Buffer]> = []
            req.values.forEach((value, i) => {
              if (!res.failures[i]) put.push([keys[i], serialize(value)])
            })
            if (put.length) ops.push({ table: name, put })
          } else if (req.type === 'delete') {
            ops.push({ table: name, del: [...req.keys] })
          } else {
            ops.push({ table: name, range: { type: req.range.type, lower: req.range.lower, upper: req.range.upper, lowerOpen: req.range.lowerOpen ?? false, upperOpen: req.range.upperOpen ?? false } })
          }
          return res
        },
      }

      /** A put whose held rows are only logged, the others stored below as usual; results in the request's order. */
      async function mutateHeld(req: DBCoreMutateRequest & { type: 'put' | 'add' }, keys: unknown[], mine: boolean[]) {
        const restAt = mine.flatMap((m, i) => (m ? [] : [i]))
        const below = restAt.length
          ? await table.mutate({ ...req, values: restAt.map((i) => req.values[i]), ...(req.keys ? { keys: restAt.map((i) => req.keys![i]) } : {}) } as DBCoreMutateRequest)
          : { numFailures: 0, failures: {}, results: [] as unknown[] }
        const results: unknown[] = keys.slice()
        const failures: Record<number, Error> = {}
        restAt.forEach((at, j) => {
          if (below.results?.[j] !== undefined) results[at] = below.results[j]
          const failure = (below.failures as Record<number, Error>)[j]
          if (failure) failures[at] = failure
        })
        const ops = pending.get(req.trans)
        if (ops) {
          const put: Array<[unknown, Buffer]> = []
          req.values.forEach((value, i) => {
            if (!failures[i] && (mine[i] || !skip(name))) put.push([results[i], serialize(value)])
          })
          if (put.length) ops.push({ table: name, put })
        }
        return { numFailures: Object.keys(failures).length, failures, results, lastResult: results[results.length - 1] }
      }
    },
  }
}

function apply(state: Map<string, DatabaseRows>, record: LogRecord, factory: IDBFactory): void {
  if ('drop' in record) return void state.delete(record.db)
  let db = state.get(record.db)
  if (!db) state.set(record.db, (db = new Map()))
  for (const op of record.ops) {
    let rows = db.get(op.table)
    if (!rows) db.set(op.table, (rows = new Map()))
    if ('put' in op) for (const [key, bytes] of op.put) rows.set(keyId(key), { key, bytes })
    else if ('del' in op) for (const key of op.del) rows.delete(keyId(key))
    else {
      const r = op.range
      // DBCoreRangeType: 1 equal, 2 range, 3 any, 4 never
      if (r.type === 3) rows.clear()
      else if (r.type === 1) rows.delete(keyId(r.lower))
      else if (r.type === 2) {
        for (const [id, row] of rows) if (inRange(factory, row.key, r)) rows.delete(id)
      }
    }
  }
}

/** A store of fake-indexeddb's own, filled in place (outside any transaction) with committed rows. */
interface RawStore {
  keyPath: string | string[] | null
  storeRecord(record: { key: unknown; value: unknown }, noOverwrite: boolean): unknown
}

/**
 * The object stores behind an fake-indexeddb connection (its `_rawDatabase`, not public API), or
 * undefined when the emulation is not shaped so: the store then copies rows through Dexie instead.
 */
export function rawStores(connection: unknown): Map<string, RawStore> | undefined {
  const stores = (connection as { _rawDatabase?: { rawObjectStores?: unknown } } | undefined)?._rawDatabase?.rawObjectStores
  if (!(stores instanceof Map)) return undefined
  for (const store of stores.values()) if (typeof (store as Partial<RawStore>)?.storeRecord !== 'function') return undefined
  return stores as Map<string, RawStore>
}

/** Sets the key at `keyPath` (dotted) of a value that lacks it. */
function withKey(value: Record<string, unknown>, keyPath: string, key: unknown): void {
  const parts = keyPath.split('.')
  let at = value
  for (const part of parts.slice(0, -1)) {
    if (!at[part] || typeof at[part] !== 'object') return
    at = at[part] as Record<string, unknown>
  }
  const last = parts[parts.length - 1]!
  if (at[last] === undefined) at[last] = key
}

function inRange(factory: IDBFactory, key: unknown, r: DBCoreKeyRange): boolean {
  const cmp = (a: unknown, b: unknown): number => factory.cmp(a, b)
  if (r.lower !== undefined && r.lower !== null) {
    const c = cmp(key, r.lower)
    if (c < 0 || (c === 0 && r.lowerOpen)) return false
  }
  if (r.upper !== undefined && r.upper !== null) {
    const c = cmp(key, r.upper)
    if (c > 0 || (c === 0 && r.upperOpen)) return false
  }
  return true
}

/** One process per store: a second one would append to the same log from another copy. */
function takeLock(dir: string): { release(): void } {
  const path = join(dir, 'LOCK')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' })
      return { release: () => void rmSync(path, { force: true }) }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new MemoryError('storage_failed', `cannot lock ${dir}: ${(e as Error).message}`, { dir })
      const pid = Number(readFileSync(path, 'utf8'))
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
        throw new MemoryError('conflict', `the store in ${dir} is in use by process ${pid}; stop it or use another --dir`, { dir, pid })
      }
      // the process that held it is gone (it crashed): take it over
      unlinkSync(path)
    }
  }
  throw new MemoryError('storage_failed', `cannot lock ${dir}`, { dir })
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
