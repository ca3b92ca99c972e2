// The sync server's handle on its second thread (room-worker.ts): the answers that cost a whole
// room (a new client's missing state, a log's check and merge) are computed there, so one
// client's first sync or a compaction never holds the event loop that every socket shares.
// If the thread fails, each answer is computed here instead: slower for the others, never wrong.
import { Worker } from 'node:worker_threads'
import * as Y from 'yjs'
import type { LogWork } from './file-room-store'
import type { SyncLog } from './log'
import { firstSyncMessages } from '../sync/first-sync'
import { compactLog, decodeRecords, encodeRecord, movable, type CompactedLog, type DecodedLog } from './room-log'
import type { RoomWorkerReply, RoomWorkerRequest } from './room-worker'

/**
 * Room changes wait this long, or until this many bytes are waiting, to leave for the thread
 * together: a message costs the event loop more than the change it carries. Anything else
 * asked of the thread sends the waiting changes first, so no answer misses one.
 */
const CHANGES_WAIT_MS = 20
const CHANGES_WAIT_BYTES = 1024 * 1024

/** Answers kept per room until it changes. */
const MAX_SHARED_REPLIES = 4

type Ask = RoomWorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never

/** The worker: the bundle's sibling when built; from source, loaded through tsx (a test runner's loader does not reach a worker thread). */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./room-worker.js', import.meta.url))
  const source = new URL('./room-worker.ts', import.meta.url).href
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}) })`, { eval: true })
}

export class RoomThread implements LogWork {
  private worker: Worker | null
  private nextId = 0
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>()
  /** Rooms open in the worker, each with its own document here to fall back on. */
  private readonly rooms = new Map<string, Y.Doc>()
  /**
   * Answers to state vectors since the room last changed, shared by every socket that asks the
   * same (new devices all send the empty one): many devices joining, or stalled on, a large room
   * hold one copy of its pieces, not one each.
   */
  private readonly replies = new Map<string, Map<string, Promise<Uint8Array[] | null>>>()

  constructor(private readonly log: SyncLog) {
    let worker: Worker | null = null
    try {
      worker = startWorker()
      // the thread never keeps a server process alive on its own
      worker.unref()
      worker.on('message', (reply: RoomWorkerReply) => this.settle(reply))
      worker.on('error', (err) => this.fail(err))
      worker.on('exit', (code) => this.fail(new Error(`the room thread exited (${code})`)))
    } catch (err) {
      log('warn', 'room_thread_unavailable', { error: (err as Error).message })
    }
    this.worker = worker
  }

  /** Whether answers are computed on the second thread (false once it failed or was stopped). */
  get threaded(): boolean {
    return this.worker !== null
  }

  private settle(reply: RoomWorkerReply): void {
    const p = this.pending.get(reply.id)
    this.pending.delete(reply.id)
    if (reply.ok) p?.resolve(reply.value)
    else p?.reject(new Error(reply.error))
  }

  private fail(err: Error): void {
    if (!this.worker) return
    this.log('error', 'room_thread_failed', { error: err.message })
    this.worker = null
    this.postChanges()
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }

  /** Room changes not posted yet, in order (see CHANGES_WAIT_MS). */
  private changes: Array<{ room: string; update: Uint8Array }> = []
  private changesBytes = 0
  private changesTimer: NodeJS.Timeout | null = null

  private postChanges(): void {
    const changes = this.changes
    this.changes = []
    this.changesBytes = 0
    if (this.changesTimer) clearTimeout(this.changesTimer)
    this.changesTimer = null
    if (!changes.length || !this.worker) return
    // one buffer for all: it moves to the thread instead of being copied
    const bytes = new Uint8Array(changes.reduce((n, c) => n + c.update.byteLength, 0))
    const ends: number[] = []
    let at = 0
    for (const c of changes) {
      bytes.set(c.update, at)
      ends.push((at += c.update.byteLength))
    }
    this.post({ op: 'updates', rooms: changes.map((c) => c.room), ends, bytes }, [bytes.buffer])
  }

  private post(message: RoomWorkerRequest, transfer: ArrayBuffer[] = []): boolean {
    if (!this.worker) return false
    // every message is read after the room changes made before it
    if (message.op !== 'updates') this.postChanges()
    try {
      this.worker.postMessage(message, transfer)
      return true
    } catch (err) {
      this.fail(err as Error)
      return false
    }
  }

  /**
   * Asks the thread, or computes `here` when it is gone. Buffers in `transfer` move to the
   * thread: if it fails after they moved, the answer is an error, never one computed from
   * emptied inputs.
   */
  private ask<T>(message: Ask, here: () => T, transfer: ArrayBuffer[] = []): Promise<T> {
    if (!this.worker) return Promise.resolve().then(here)
    const id = this.nextId++
    const lengths = transfer.map((b) => b.byteLength)
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      if (!this.post({ ...message, id } as RoomWorkerRequest, transfer)) reject(new Error('the room thread is gone'))
    }).catch((err: unknown) => {
      if (transfer.some((b, i) => b.byteLength !== lengths[i])) throw err
      return here()
    })
  }

  /**
   * Starts mirroring a room's document, loaded from `state`; every later change must come
   * through `update`. `state` is handed over: it may be unusable here afterwards.
   */
  open(room: string, doc: Y.Doc, state: Uint8Array | null): void {
    this.replies.delete(room)
    this.rooms.set(room, doc)
    this.post({ op: 'open', room, state, gc: doc.gc }, state ? movable([state]) : [])
  }

  /** A change of `doc`; ignored once another document holds the room (an unloaded room's last updates). */
  update(room: string, doc: Y.Doc, update: Uint8Array): void {
    if (this.rooms.get(room) !== doc || !this.worker) return
    this.replies.delete(room)
    // the bytes are read later: Yjs hands each listener a fresh array it never changes
    this.changes.push({ room, update })
    this.changesBytes += update.byteLength
    if (this.changesBytes >= CHANGES_WAIT_BYTES) return this.postChanges()
    if (this.changesTimer) return
    this.changesTimer = setTimeout(() => this.postChanges(), CHANGES_WAIT_MS)
    this.changesTimer.unref()
  }

  close(room: string, doc: Y.Doc): void {
    if (this.rooms.get(room) !== doc) return
    this.replies.delete(room)
    this.rooms.delete(room)
    this.post({ op: 'close', room })
  }

  /**
   * The messages answering `stateVector` (see first-sync.ts): what `doc` holds beyond it, at
   * least every change handed to `update` before this call. Computed here when the thread is
   * gone or mirrors another document; null once `doc` is destroyed. Callers share the arrays.
   */
  syncReply(room: string, doc: Y.Doc, stateVector: Uint8Array): Promise<Uint8Array[] | null> {
    const here = () => (doc.isDestroyed ? null : firstSyncMessages(Y.encodeStateAsUpdate(doc, stateVector)))
    if (this.rooms.get(room) !== doc) return Promise.resolve().then(here)
    let answers = this.replies.get(room)
    if (!answers) this.replies.set(room, (answers = new Map()))
    const key = Buffer.from(stateVector.buffer, stateVector.byteOffset, stateVector.byteLength).toString('base64')
    const known = answers.get(key)
    if (known) return known
    const reply = this.ask<Uint8Array[] | null>({ op: 'syncReply', room, stateVector }, here)
    // a few state vectors per room; an answer that failed is not kept
    if (answers.size >= MAX_SHARED_REPLIES) answers.delete(answers.keys().next().value!)
    answers.set(key, reply)
    reply.catch(() => answers.delete(key))
    return reply
  }

  /** `bytes` are handed over: they may be unusable here afterwards. */
  decodeLog(bytes: Buffer): Promise<DecodedLog> {
    return this.ask<DecodedLog>({ op: 'decodeLog', bytes }, () => decodeRecords(bytes), movable([bytes]))
  }

  /** `bytes` are handed over: they may be unusable here afterwards. */
  compactLog(bytes: Buffer): Promise<CompactedLog | null> {
    return this.ask<CompactedLog | null>({ op: 'compactLog', bytes }, () => compactLog(bytes), movable([bytes]))
  }

  /** `updates` are handed over: they may be unusable here afterwards. */
  merge(updates: Uint8Array[]): Promise<Uint8Array> {
    return this.ask<Uint8Array>({ op: 'merge', updates, asRecord: false }, () => Y.mergeUpdates(updates), movable(updates))
  }

  /** `merge`, framed as one record of the room log. */
  mergeRecord(updates: Uint8Array[]): Promise<Uint8Array> {
    return this.ask<Uint8Array>({ op: 'merge', updates, asRecord: true }, () => encodeRecord(Y.mergeUpdates(updates)), movable(updates))
  }

  async terminate(): Promise<void> {
    const worker = this.worker
    this.worker = null
    this.postChanges()
    for (const p of this.pending.values()) p.reject(new Error('the room thread was stopped'))
    this.pending.clear()
    this.rooms.clear()
    await worker?.terminate()
  }
}
