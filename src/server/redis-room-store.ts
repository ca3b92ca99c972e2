// Room history in Redis, shared by every sync server of a deployment: each room is a stream of
// Yjs updates (XADD, acknowledged by Redis only once its AOF is fsynced) plus a snapshot hash,
// and one blocking reader per server fans new stream entries out to the rooms it holds.
import { randomBytes } from 'node:crypto'
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import { ROOM_NAME } from './file-room-store'
import type { SyncLog } from './log'
import type { RedisConnection } from './redis-connection'
import type { RoomStore } from './room-store'

export interface RedisRoomStoreOptions {
  /** Prefix of every key; default `cairn:`. */
  prefix?: string
  /** Fold a room's stream into its snapshot once this many entries were appended here; default 500. */
  compactAfterEntries?: number
  /**
   * Stream entries stay this long after they were folded into the snapshot, so a server whose
   * reader lags (or is reconnecting) still finds them; default 60 s.
   */
  retentionMs?: number
  /** How long an append keeps retrying while Redis is unreachable; default 30 s. */
  persistTimeoutMs?: number
  log?: SyncLog
}

interface Subscription {
  /** Last stream id delivered (or loaded); the reader asks for what comes after it. */
  cursor: string
  listeners: Set<(update: Uint8Array) => void>
}

type Entry = [id: Buffer, fields: Buffer[]]

// Loads a snapshot and the stream entries after it in one atomic step: a compaction running
// between two separate reads could trim entries the older snapshot does not hold.
const LOAD = `
local s = redis.call('HMGET', KEYS[1], 'u', 'upto')
local from = '-'
if s[2] then from = '(' .. s[2] end
return {s[1], s[2], redis.call('XRANGE', KEYS[2], from, '+')}
`

// Stores a snapshot unless another server already stored a newer one, then trims the stream
// of entries older than the retention window.
const SAVE_SNAPSHOT = `
local function older(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am < bm or (am == bm and as < bs)
end
local cur = redis.call('HGET', KEYS[1], 'upto')
if cur and not older(cur, ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'u', ARGV[1], 'upto', ARGV[2])
redis.call('XTRIM', KEYS[2], 'MINID', ARGV[3])
return 1
`

function parseId(id: string): [number, number] {
  const dash = id.indexOf('-')
  return [Number(id.slice(0, dash)), Number(id.slice(dash + 1))]
}

export function compareIds(a: string, b: string): number {
  const [am, as] = parseId(a)
  const [bm, bs] = parseId(b)
  return am !== bm ? am - bm : as - bs
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function fieldOf(fields: Buffer[], name: string): Buffer | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]!.toString() === name) return fields[i + 1]
  return undefined
}

export class RedisRoomStore implements RoomStore {
  /** Marks this server's own stream entries, which its rooms already hold. */
  readonly serverId = randomBytes(6).toString('hex')
  private readonly prefix: string
  private readonly compactAfter: number
  private readonly retentionMs: number
  private readonly persistTimeoutMs: number
  private readonly log: SyncLog
  private readonly subscriptions = new Map<string, Subscription>()
  /** Stream id each room was last loaded up to, until a subscription takes it over. */
  private readonly loadedUpTo = new Map<string, string>()
  private readonly appended = new Map<string, number>()
  private readonly compacting = new Map<string, Promise<void>>()
  private readonly inFlight = new Map<string, Set<Promise<void>>>()
  private readerId: number | null = null
  /** Rooms whose cursor may have fallen behind a compaction: newly followed ones, or all after an error. */
  private readonly toCheck = new Set<string>()
  private wake: (() => void) | null = null
  private readerLoop: Promise<void> | null = null
  private closed = false

  constructor(private readonly redis: RedisConnection, options: RedisRoomStoreOptions = {}) {
    this.prefix = options.prefix ?? 'cairn:'
    this.compactAfter = options.compactAfterEntries ?? 500
    this.retentionMs = options.retentionMs ?? 60_000
    this.persistTimeoutMs = options.persistTimeoutMs ?? 30_000
    this.log = options.log ?? (() => {})
  }

  private keys(room: string): [snapshot: string, stream: string] {
    if (!ROOM_NAME.test(room)) throw new MemoryError('invalid_request', `"${room.slice(0, 80)}" is not a valid room name (letters, digits, "-" and "_", up to 128)`, { room: room.slice(0, 80) })
    return [`${this.prefix}room:${room}:snap`, `${this.prefix}room:${room}:log`]
  }

  private async readRoom(room: string): Promise<{ parts: Uint8Array[]; lastId: string | null }> {
    const keys = this.keys(room)
    const [snapshot, upto, entries] = await this.redis.command.sendCommand<[Buffer | null, Buffer | null, Entry[]]>(['EVAL', LOAD, '2', ...keys])
    const parts: Uint8Array[] = snapshot ? [new Uint8Array(snapshot)] : []
    let lastId = upto ? upto.toString() : null
    for (const [id, fields] of entries) {
      const update = fieldOf(fields, 'u')
      if (update) parts.push(new Uint8Array(update))
      lastId = id.toString()
    }
    return { parts, lastId }
  }

  async load(room: string): Promise<Uint8Array | null> {
    const { parts, lastId } = await this.readRoom(room)
    // The reader starts after what this load saw; an older start is harmless (updates are idempotent).
    const known = this.loadedUpTo.get(room)
    const from = lastId ?? '0-0'
    if (!this.subscriptions.has(room) && (known === undefined || compareIds(from, known) < 0)) this.loadedUpTo.set(room, from)
    if (parts.length === 0) return null
    return parts.length === 1 ? parts[0]! : Y.mergeUpdates(parts)
  }

  /**
   * Appends an update and resolves once Redis has acknowledged it, which with
   * `appendfsync always` means it is in the fsynced AOF. A connection lost mid-command is
   * retried: the update may then be stored twice, which Yjs ignores.
   */
  persist(room: string, update: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new MemoryError('storage_failed', 'the room store is closed'))
    const [, stream] = this.keys(room)
    const done = (async () => {
      const deadline = Date.now() + this.persistTimeoutMs
      for (let attempt = 0; ; attempt++) {
        try {
          // Bounded even while it waits in the client's queue for a reconnect, or for a reply.
          const timeout = Math.max(1, deadline - Date.now())
          await this.redis.command.sendCommand(['XADD', stream, '*', 'u', Buffer.from(update.buffer, update.byteOffset, update.byteLength), 's', this.serverId], { timeout, rejectInFlight: true })
          break
        } catch (err) {
          if (this.closed || Date.now() >= deadline) {
            throw new MemoryError('storage_failed', `could not append to room ${room} in Redis: ${(err as Error).message}`, { room })
          }
          await sleep(Math.min(50 * 2 ** attempt, 500))
        }
      }
      const n = (this.appended.get(room) ?? 0) + 1
      this.appended.set(room, n)
      if (n >= this.compactAfter) {
        this.appended.set(room, 0)
        this.compact(room).catch((err: unknown) => this.log('warn', 'room_compact_failed', { room, error: (err as Error).message }))
      }
    })()
    let set = this.inFlight.get(room)
    if (!set) this.inFlight.set(room, (set = new Set()))
    // Only for flush; the failure itself goes to the caller of persist.
    const tracked: Promise<void> = done.then(() => undefined, () => undefined).finally(() => set.delete(tracked))
    set.add(tracked)
    return done
  }

  append(room: string, update: Uint8Array): void {
    this.persist(room, update).catch((err: unknown) => this.log('error', 'room_write_failed', { room, error: (err as Error).message }))
  }

  async flush(room?: string): Promise<void> {
    const sets = room === undefined ? [...this.inFlight.values()] : [this.inFlight.get(room) ?? new Set()]
    await Promise.allSettled(sets.flatMap((s) => [...s]))
  }

  /** Folds the room's stream into its snapshot (any server may; the newest snapshot wins). */
  compact(room: string): Promise<void> {
    const running = this.compacting.get(room)
    if (running) return running
    const p = this.compactNow(room).finally(() => this.compacting.delete(room))
    this.compacting.set(room, p)
    return p
  }

  private async compactNow(room: string): Promise<void> {
    const keys = this.keys(room)
    const { parts, lastId } = await this.readRoom(room)
    if (parts.length <= 1 || lastId === null) return
    const merged = Y.mergeUpdates(parts)
    const trimBefore = `${Math.max(0, parseId(lastId)[0] - this.retentionMs)}-0`
    await this.redis.command.sendCommand(['EVAL', SAVE_SNAPSHOT, '2', ...keys, Buffer.from(merged.buffer, merged.byteOffset, merged.byteLength), lastId, trimBefore])
  }

  subscribe(room: string, onUpdate: (update: Uint8Array) => void): () => void {
    let sub = this.subscriptions.get(room)
    if (!sub) {
      // Without an earlier load, from the start of the retained stream: slower, never short.
      sub = { cursor: this.loadedUpTo.get(room) ?? '0-0', listeners: new Set() }
      this.loadedUpTo.delete(room)
      this.subscriptions.set(room, sub)
      this.toCheck.add(room)
      this.interruptReader()
    }
    sub.listeners.add(onUpdate)
    this.readerLoop ??= this.read()
    const s = sub
    return () => {
      s.listeners.delete(onUpdate)
      if (s.listeners.size === 0 && this.subscriptions.get(room) === s) {
        this.subscriptions.delete(room)
        this.interruptReader()
      }
    }
  }

  /** Makes the reader start a new XREAD with the current set of rooms. */
  private interruptReader(): void {
    if (this.wake) {
      const wake = this.wake
      this.wake = null
      wake()
      return
    }
    if (this.readerId === null || this.closed) return
    // TIMEOUT makes the blocked XREAD return as if it had timed out; no error to tell apart.
    this.redis.command.sendCommand(['CLIENT', 'UNBLOCK', String(this.readerId), 'TIMEOUT']).catch(() => {})
  }

  private async read(): Promise<void> {
    while (!this.closed) {
      if (this.subscriptions.size === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve))
        continue
      }
      try {
        if (this.readerId === null) this.readerId = await this.redis.reader.sendCommand<number>(['CLIENT', 'ID'])
        if (this.toCheck.size > 0) await this.catchUpAfterGap()
        const rooms = [...this.subscriptions.keys()]
        const streams = rooms.map((r) => this.keys(r)[1])
        const cursors = rooms.map((r) => this.subscriptions.get(r)!.cursor)
        const reply = await this.redis.reader.sendCommand<Array<[Buffer, Entry[]]> | null>(['XREAD', 'COUNT', '1000', 'BLOCK', '2000', 'STREAMS', ...streams, ...cursors])
        if (!reply) continue
        for (const [key, entries] of reply) {
          const room = rooms[streams.indexOf(key.toString())]
          const sub = room === undefined ? undefined : this.subscriptions.get(room)
          if (!sub) continue
          for (const [id, fields] of entries) {
            sub.cursor = id.toString()
            if (fieldOf(fields, 's')?.toString() === this.serverId) continue
            const update = fieldOf(fields, 'u')
            if (!update) continue
            for (const l of sub.listeners) this.deliver(room!, l, new Uint8Array(update))
          }
        }
      } catch (err) {
        if (this.closed) break
        // The connection dropped (it reconnects by itself) or Redis restarted: a new client id,
        // and possibly entries trimmed while this reader was away.
        this.readerId = null
        if (this.toCheck.size < this.subscriptions.size) this.log('warn', 'redis_reader_interrupted', { error: (err as Error).message })
        for (const room of this.subscriptions.keys()) this.toCheck.add(room)
        await sleep(100)
      }
    }
  }

  private deliver(room: string, listener: (update: Uint8Array) => void, update: Uint8Array): void {
    try {
      listener(update)
    } catch (err) {
      this.log('error', 'room_fanout_failed', { room, error: (err as Error).message })
    }
  }

  /** Rooms whose cursor fell behind the snapshot get the snapshot (merging is idempotent). */
  private async catchUpAfterGap(): Promise<void> {
    for (const room of [...this.toCheck]) {
      const sub = this.subscriptions.get(room)
      if (sub) await this.catchUp(room, sub)
      // Only once checked: a check that failed (Redis down) runs again after the reconnect.
      this.toCheck.delete(room)
    }
  }

  private async catchUp(room: string, sub: Subscription): Promise<void> {
    const [snapshotKey, stream] = this.keys(room)
    const [upto, first] = await Promise.all([
      this.redis.command.sendCommand<Buffer | null>(['HGET', snapshotKey, 'upto']),
      this.redis.command.sendCommand<Entry[]>(['XRANGE', stream, '-', '+', 'COUNT', '1']),
    ])
    if (!upto) return
    const firstId = first[0]?.[0].toString()
    // Behind the snapshot, and the entries right after the cursor may be gone.
    const gap = compareIds(sub.cursor, upto.toString()) < 0 && (firstId === undefined || compareIds(firstId, sub.cursor) > 0)
    if (!gap) return
    const snapshot = await this.redis.command.sendCommand<Buffer | null>(['HGET', snapshotKey, 'u'])
    if (snapshot) for (const l of sub.listeners) this.deliver(room, l, new Uint8Array(snapshot))
    this.log('warn', 'redis_reader_gap', { room, cursor: sub.cursor, snapshot: upto.toString() })
  }

  async close(): Promise<void> {
    await this.flush()
    this.closed = true
    this.wake?.()
    this.subscriptions.clear()
    if (this.readerId !== null) await this.redis.command.sendCommand(['CLIENT', 'UNBLOCK', String(this.readerId), 'TIMEOUT']).catch(() => {})
    await this.readerLoop?.catch(() => {})
  }
}
