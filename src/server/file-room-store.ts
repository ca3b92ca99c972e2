// Embedded persistence: one append-only log file per room under `<dataDir>/rooms/`. Each record
// is [u32 length][u32 crc32][Yjs update]; appends are batched and fdatasync'ed (a live room's
// log stays open between batches, a bounded number of logs at once), a torn tail
// left by a crash is cut off on load, a corrupt record is skipped without losing the good ones
// after it (the damaged log is kept beside it as `<room>.ylog.damaged-<time>`, and the log
// names the clients whose history the room now waits for), and compaction rewrites the log as
// one merged update through a temporary file and an atomic rename. Compaction merges beside the
// room's appends, not in their way: only the swap (the few records appended meanwhile, copied
// after the merged one, and the rename) waits in the room's queue.
import { constants, mkdirSync } from 'node:fs'
import { copyFile, link, open, readFile, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises'
import { basename, join } from 'node:path'
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import { ROOM_NAME } from '../core/identifiers'
import { jsonLineLog, type SyncLog } from './log'
import { compactLog, decodeRecords, encodeRecord, RECORD_HEADER_BYTES, type CompactedLog, type DecodedLog } from './room-log'
import type { RoomStore } from './room-store'

export { decodeRecords, type DecodedLog, type MissingHistory } from './room-log'

export { ROOM_NAME }

/** The folder of `<dataDir>` that holds one `<room>.ylog` per room. */
export const ROOMS_DIR = 'rooms'

export interface FileRoomStoreOptions {
  /**
   * Compact a room's log once it holds this many records and has grown to twice its size after
   * the last compaction (so a room's compactions cost, together, a few times its size, not its
   * size for every few hundred writes).
   */
  compactAfterRecords?: number
  /** Where skipped records and write failures are reported; default JSON lines on stderr. */
  log?: SyncLog
  /**
   * Where the work that grows with a whole room runs (checking a log's records, merging them):
   * the sync server passes its second thread; default here, in this thread.
   */
  offload?: LogWork
  /**
   * Room logs kept open between batches, at most; the least recently written is closed beyond
   * it. Default 128.
   */
  maxOpenLogs?: number
}

/** Checking and merging a room's records, wherever it runs. Both may take over their inputs: the caller reads them no more. */
export interface LogWork {
  decodeLog(bytes: Buffer): Promise<DecodedLog>
  merge(updates: Uint8Array[]): Promise<Uint8Array>
  /** The merged update as one record of the log (its checksum is the size of the room too). */
  mergeRecord(updates: Uint8Array[]): Promise<Uint8Array>
  /** A log's bytes merged into one record, or null when it is damaged or holds one record or none (room-log.ts). */
  compactLog(bytes: Buffer): Promise<CompactedLog | null>
}

const inThisThread: LogWork = {
  decodeLog: async (bytes) => decodeRecords(bytes),
  merge: async (updates) => Y.mergeUpdates(updates),
  mergeRecord: async (updates) => encodeRecord(Y.mergeUpdates(updates)),
  compactLog: async (bytes) => compactLog(bytes),
}

/** Clients named in one `room_log_history_missing` line. */
const MISSING_NAMED = 100

interface RoomState {
  /** Every file operation of the room runs on this chain, in order. */
  chain: Promise<void>
  queued: Uint8Array[]
  /** The write of the queued updates, once scheduled: every update queued before it starts goes in it. */
  queuedWrite: Promise<void> | null
  /**
   * The log opened for appending, kept between batches. Closed before anything renames,
   * truncates or deletes the log (a handle on a replaced file would write where no load reads).
   */
  handle: FileHandle | null
  records: number
  /** The log's length in bytes, and its length when last compacted (or loaded). */
  bytes: number
  compactedBytes: number
  /** Why the last batch could not be written; flushes until the next batch report it. */
  failed: Error | null
  /** The compaction merging beside the appends, if one is. */
  compacting: Promise<void> | null
  /** Bumped by anything that rewrites or deletes the log, so a compaction begun before it is dropped. */
  generation: number
}

/**
 * How a room log is opened for appending. Where the system has O_DSYNC, each write returns
 * once its data is on disk, as a write followed by fdatasync would: one call per batch, not two.
 */
const APPEND_FLAGS = constants.O_DSYNC ? constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC : 'a'

async function writeDurably(path: string, data: Uint8Array, flags: 'a' | 'w'): Promise<void> {
  const file = await open(path, flags)
  try {
    await file.write(data)
    await file.datasync()
  } finally {
    await file.close()
  }
}

export class FileRoomStore implements RoomStore {
  private readonly dir: string
  private readonly rooms = new Map<string, RoomState>()
  private readonly compactAfter: number
  private readonly log: SyncLog
  private readonly work: LogWork
  private readonly maxOpenLogs: number
  /** Rooms whose log is open, least recently written first. */
  private readonly openLogs = new Map<string, FileHandle>()
  private closed = false

  constructor(dataDir: string, options: FileRoomStoreOptions = {}) {
    this.dir = join(dataDir, ROOMS_DIR)
    mkdirSync(this.dir, { recursive: true })
    this.compactAfter = options.compactAfterRecords ?? 500
    this.log = options.log ?? jsonLineLog
    this.work = options.offload ?? inThisThread
    this.maxOpenLogs = Math.max(1, options.maxOpenLogs ?? 128)
  }

  /** How many room logs are open now (tests). */
  get openLogCount(): number {
    return this.openLogs.size
  }

  private pathOf(room: string): string {
    if (!ROOM_NAME.test(room)) throw new MemoryError('invalid_request', `"${room.slice(0, 80)}" is not a valid room name (letters, digits, "-" and "_", up to 128)`, { room: room.slice(0, 80) })
    return join(this.dir, `${room}.ylog`)
  }

  private state(room: string): RoomState {
    let s = this.rooms.get(room)
    if (!s) {
      s = { chain: Promise.resolve(), queued: [], queuedWrite: null, handle: null, records: 0, bytes: 0, compactedBytes: 0, failed: null, compacting: null, generation: 0 }
      this.rooms.set(room, s)
    }
    return s
  }

  private run<T>(room: string, task: () => Promise<T>): Promise<T> {
    const s = this.state(room)
    const result = s.chain.then(task)
    // The chain continues after a failure; the failure is reported to whoever awaited the task.
    s.chain = result.then(() => undefined, () => undefined)
    return result
  }

  /** Appends `data` to the room's log and fdatasyncs it, through the log's open handle. In the room's queue. */
  private async appendDurably(room: string, s: RoomState, data: Uint8Array): Promise<void> {
    let handle = s.handle
    if (!handle) {
      handle = await open(this.pathOf(room), APPEND_FLAGS)
      s.handle = handle
    }
    this.openLogs.delete(room)
    this.openLogs.set(room, handle)
    if (this.openLogs.size > this.maxOpenLogs) {
      const [oldest, stale] = this.openLogs.entries().next().value!
      this.openLogs.delete(oldest)
      // in that room's queue: a write on it may be under way
      void this.run(oldest, () => this.closeLog(oldest, stale))
    }
    try {
      for (let at = 0; at < data.byteLength;) {
        const { bytesWritten } = await handle.write(data, at)
        if (bytesWritten === 0) throw new Error('the disk took none of the batch')
        at += bytesWritten
      }
      if (APPEND_FLAGS === 'a') await handle.datasync()
    } catch (err) {
      await this.closeLog(room, handle)
      throw err
    }
  }

  /** Closes the room's open log (`only`: if it is still that handle). In the room's queue. */
  private async closeLog(room: string, only?: FileHandle): Promise<void> {
    const s = this.state(room)
    const handle = s.handle
    if (!handle || (only && handle !== only)) return
    s.handle = null
    if (this.openLogs.get(room) === handle) this.openLogs.delete(room)
    await handle.close().catch(() => undefined)
  }

  private async readLog(room: string): Promise<Uint8Array[]> {
    const path = this.pathOf(room)
    // the log may be repaired (renamed over, truncated) below; appends reopen it
    await this.closeLog(room)
    let bytes: Buffer
    try {
      bytes = await readFile(path)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const length = bytes.byteLength
    // `bytes` may move to another thread: only its length is read afterwards
    const { records, skipped, goodLength, missing } = await this.work.decodeLog(bytes)
    for (const { from, to } of skipped) this.log('error', 'room_log_record_skipped', { room, from, to, bytes: to - from })
    if (skipped.length) {
      // The damaged log stays whole for repair (the offsets above are in it) ...
      const kept = await this.keepDamaged(path)
      // ... and the devices that hold what it lost send it again: each one's sync step 2 answers
      // the room's state vector, which stops where a client's history does (see `missingHistory`).
      this.log('error', 'room_log_history_missing', {
        room,
        kept,
        // a bounded line: the first clients, and how many in all
        missing: missing.slice(0, MISSING_NAMED),
        clients: missing.length,
        action: 'reconnect the devices that wrote to this memory: each sends what the room lacks; a record lost at the end of a client\'s history is named by no later record but is sent again alike',
      })
      // Rewrite the log from its good records so the bad stretch is read (and reported) once.
      const tmp = `${path}.tmp`
      await writeDurably(tmp, Buffer.concat(records.map(encodeRecord)), 'w')
      await rename(tmp, path)
      await this.syncDir()
      this.state(room).generation++
    } else if (goodLength < length) {
      // mostly a write a crash tore (never acknowledged), but it may be a damaged last record:
      // its bytes are kept too
      const kept = await this.keepTail(path, goodLength, length)
      this.log('warn', 'room_log_tail_cut', { room, bytes: length - goodLength, kept })
      await truncate(path, goodLength)
      this.state(room).generation++
    }
    return records
  }

  private damagedPath(path: string): string {
    return `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`
  }

  /** Keeps the bytes of the log from `from` to `to` beside it; returns the kept file's name. */
  private async keepTail(path: string, from: number, to: number): Promise<string> {
    const kept = this.damagedPath(path)
    const tail = Buffer.alloc(to - from)
    const file = await open(path, 'r')
    try {
      await file.read(tail, 0, tail.byteLength, from)
    } finally {
      await file.close()
    }
    await writeDurably(kept, tail, 'w')
    await this.syncDir()
    return basename(kept)
  }

  /** Keeps the log as it is now beside itself; returns the kept file's name. */
  private async keepDamaged(path: string): Promise<string> {
    const kept = this.damagedPath(path)
    // a second name for the same bytes costs no copy; a file system without links gets a copy
    await link(path, kept).catch(() => copyFile(path, kept))
    await this.syncDir()
    return basename(kept)
  }

  load(room: string): Promise<Uint8Array | null> {
    return this.run(room, async () => {
      const records = await this.readLog(room)
      const s = this.state(room)
      s.records = records.length
      s.bytes = s.compactedBytes = logBytes(records)
      if (records.length === 0) return null
      return records.length === 1 ? records[0]! : await this.work.merge(records)
    })
  }

  append(room: string, update: Uint8Array): void {
    void this.queue(room, update)
  }

  /** Appends and resolves once the update's batch (a group commit with its neighbours) is fdatasync'ed. */
  persist(room: string, update: Uint8Array): Promise<void> {
    return this.queue(room, update)
  }

  /** Queues `update` for the room's next write; the promise settles with that write (handled: `append` drops it). */
  private queue(room: string, update: Uint8Array): Promise<void> {
    if (this.closed) throw new MemoryError('storage_failed', 'the room store is closed')
    this.pathOf(room)
    const s = this.state(room)
    s.queued.push(update)
    if (s.queuedWrite) return s.queuedWrite
    // Updates queued while a write is in flight go out together in the next write.
    const write = this.run(room, async () => {
      s.queuedWrite = null
      const batch = s.queued
      s.queued = []
      if (batch.length === 0) return
      s.failed = null
      const data = Buffer.concat(batch.map(encodeRecord))
      try {
        await this.appendDurably(room, s, data)
      } catch (err) {
        s.failed = err as Error
        this.log('error', 'room_write_failed', { room, error: (err as Error).message })
        throw new MemoryError('storage_failed', `room "${room}" could not be written: ${(err as Error).message}`)
      }
      s.records += batch.length
      s.bytes += data.byteLength
      if (s.records >= this.compactAfter && s.bytes >= 2 * s.compactedBytes && !s.compacting) this.compactBeside(room)
    })
    write.catch(() => undefined)
    s.queuedWrite = write
    return write
  }

  /** Compacts the whole log in the room's queue: appends wait for it (an explicit `compact`). */
  private async compactNow(room: string): Promise<void> {
    const records = await this.readLog(room)
    if (records.length <= 1) return
    const path = this.pathOf(room)
    const tmp = `${path}.tmp`
    const merged = await this.work.mergeRecord(records)
    await writeDurably(tmp, merged, 'w')
    await rename(tmp, path)
    await this.syncDir()
    const s = this.state(room)
    s.records = 1
    s.bytes = s.compactedBytes = merged.byteLength
    s.generation++
  }

  /**
   * Compacts the log as it stands while appends go on. The records up to the log's present end
   * are read and merged, and the merged record written to a temporary file, outside the room's
   * queue; in the queue, only the records appended meanwhile are copied after it before the
   * rename. A log rewritten or deleted in between (a repair, `remove`) drops the compaction.
   */
  private compactBeside(room: string): void {
    const s = this.state(room)
    const done = this.compactingBeside(room, s).catch((err: unknown) => {
      this.log('warn', 'room_compaction_failed', { room, error: (err as Error).message })
    }).finally(() => {
      s.compacting = null
    })
    s.compacting = done
  }

  private async compactingBeside(room: string, s: RoomState): Promise<void> {
    const path = this.pathOf(room)
    // where the log ends now, read in the queue: bytes before it are never written again
    const { end, generation } = await this.run(room, async () => ({ end: (await stat(path)).size, generation: s.generation }))
    const head = Buffer.alloc(end)
    const file = await open(path, 'r')
    try {
      await file.read(head, 0, end, 0)
    } finally {
      await file.close()
    }
    // null for a damaged stretch, which is the load's to repair and report: the log stays as it is
    const compacted = await this.work.compactLog(head)
    if (!compacted) return
    const { record: merged, records } = compacted
    const tmp = `${path}.compacting.tmp`
    try {
      await writeDurably(tmp, merged, 'w')
      await this.run(room, async () => {
        if (s.generation !== generation || this.closed) return
        const tail = await readFrom(path, end)
        await writeDurably(tmp, tail, 'a')
        await this.closeLog(room)
        await rename(tmp, path)
        await this.syncDir()
        s.records -= records - 1
        s.bytes = merged.byteLength + tail.byteLength
        s.compactedBytes = merged.byteLength
        s.generation++
      })
    } finally {
      await unlink(tmp).catch(() => undefined)
    }
  }

  /** Makes a rename in the rooms directory durable. */
  private async syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r')
    try {
      await dir.sync()
    } catch {
      // Some file systems refuse fsync on directories; the rename is still atomic there.
    } finally {
      await dir.close()
    }
  }

  compact(room: string): Promise<void> {
    return this.run(room, () => this.compactNow(room))
  }

  /** Waits for the appends made so far; rejects when a batch among them could not be written. */
  async flush(room?: string): Promise<void> {
    const rooms = room === undefined ? [...this.rooms.keys()] : [room]
    await Promise.all(rooms.map((r) => this.run(r, async () => {
      const failed = this.state(r).failed
      if (failed) throw new MemoryError('storage_failed', `room "${r}" could not be written: ${failed.message}`)
    })))
  }

  /** Deletes a room's history; used when a memory is deleted. */
  remove(room: string): Promise<void> {
    return this.run(room, async () => {
      await this.closeLog(room)
      await unlink(this.pathOf(room)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err
      })
      const s = this.state(room)
      s.records = s.bytes = s.compactedBytes = 0
      s.generation++
    })
  }

  /** Resolves when no compaction is merging beside the appends (tests, and close). */
  async settled(): Promise<void> {
    await Promise.all([...this.rooms.values()].map((s) => s.compacting))
  }

  async close(): Promise<void> {
    await this.flush()
    await this.settled()
    this.closed = true
    await Promise.all([...this.rooms.keys()].map((room) => this.run(room, () => this.closeLog(room))))
  }
}

/** The bytes of `path` from `offset` to its end. */
async function readFrom(path: string, offset: number): Promise<Buffer> {
  const file = await open(path, 'r')
  try {
    const { size } = await file.stat()
    const bytes = Buffer.alloc(Math.max(0, size - offset))
    if (bytes.byteLength) await file.read(bytes, 0, bytes.byteLength, offset)
    return bytes
  } finally {
    await file.close()
  }
}

/** The length of a log holding `records`, each framed. */
function logBytes(records: Uint8Array[]): number {
  return records.reduce((n, r) => n + RECORD_HEADER_BYTES + r.byteLength, 0)
}
