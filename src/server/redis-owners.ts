// Which connection owns each Yjs client id of a room, in Redis, shared by every sync server of
// a deployment: a hash `<prefix>room:<room>:owners` from client id to connection id, each field
// set once (HSETNX) and never changed. A device that reconnects to another server is judged by
// the same table, and a server learns the owners of client ids that reached its rooms through
// another server before its room holds their structs (see `learn`).
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import type { OwnerTable } from './client-owners'
import { ROOM_NAME } from './file-room-store'
import type { RedisConnection } from './redis-connection'
import { conflict, MOVED, SKIPPED, type MoveOutcome } from './redis-import'

// Binds the clients not bound yet and returns every client's owner, in one atomic step: of two
// servers binding the same id at once, one wins and the other learns who.
const BIND = `
local out = {}
for i = 2, #ARGV do
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[1])
  out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i])
end
return out
`

// Binds each client of the ARGV pairs (client, connection) not bound yet; answers, per pair, 1
// for a new binding or the connection the client was bound to already.
const IMPORT = `
local out = {}
for i = 1, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then out[#out + 1] = 1
  else out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i]) end
end
return out
`

/** Bindings moved per Lua call: a room's clients are few, but a call must stay short. */
const IMPORT_BATCH = 500

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface RedisOwnersOptions {
  prefix?: string
  /** How long a binding keeps retrying while Redis is unreachable; default 30 s. */
  timeoutMs?: number
}

export class RedisClientOwners implements OwnerTable {
  private readonly prefix: string
  private readonly timeoutMs: number
  private readonly rooms = new Map<string, Map<number, string>>()

  constructor(private readonly redis: RedisConnection, options: RedisOwnersOptions = {}) {
    this.prefix = options.prefix ?? 'cairn:'
    this.timeoutMs = options.timeoutMs ?? 30_000
  }

  private key(room: string): string {
    if (!ROOM_NAME.test(room)) throw new MemoryError('invalid_request', `"${room.slice(0, 80)}" is not a valid room name`, { room: room.slice(0, 80) })
    return `${this.prefix}room:${room}:owners`
  }

  private table(room: string): Map<number, string> {
    let owners = this.rooms.get(room)
    if (!owners) this.rooms.set(room, (owners = new Map()))
    return owners
  }

  /** Reads every binding of the room (each load: other servers may have bound ids meanwhile). */
  async load(room: string): Promise<void> {
    const flat = await this.redis.command.sendCommand<Buffer[]>(['HGETALL', this.key(room)])
    const owners = this.table(room)
    for (let i = 0; i + 1 < flat.length; i += 2) owners.set(Number(flat[i]!.toString()), flat[i + 1]!.toString())
  }

  ownerOf(room: string, client: number): string | undefined {
    return this.rooms.get(room)?.get(client)
  }

  bind(room: string, clients: number[], connectionId: string): Promise<void> {
    const owners = this.table(room)
    const fresh = clients.filter((c) => !owners.has(c))
    for (const c of fresh) owners.set(c, connectionId)
    if (fresh.length === 0) return Promise.resolve()
    const key = this.key(room)
    // Sent at once, on the connection the room store's XADD uses after it: Redis runs them in order.
    return (async () => {
      const deadline = Date.now() + this.timeoutMs
      let reply: Buffer[]
      for (let attempt = 0; ; attempt++) {
        try {
          const timeout = Math.max(1, deadline - Date.now())
          reply = await this.redis.command.sendCommand<Buffer[]>(['EVAL', BIND, '1', key, connectionId, ...fresh.map(String)], { timeout, rejectInFlight: true })
          break
        } catch (err) {
          if (Date.now() >= deadline) {
            // Not recorded: forget them here too, or a resend would pass as this connection's
            // and be stored with no owner that other servers could read.
            for (const c of fresh) if (owners.get(c) === connectionId) owners.delete(c)
            throw new MemoryError('storage_failed', `could not record client owners of room ${room} in Redis: ${(err as Error).message}`, { room })
          }
          await sleep(Math.min(50 * 2 ** attempt, 500))
        }
      }
      const taken: number[] = []
      fresh.forEach((c, i) => {
        const owner = reply[i]?.toString()
        if (owner === undefined) return
        owners.set(c, owner)
        if (owner !== connectionId) taken.push(c)
      })
      if (taken.length > 0) {
        throw new MemoryError('conflict', `Yjs client ${taken[0]} of room ${room} was started by another connection at the same time`, { room, clients: taken.slice(0, 20).map(String) })
      }
    })()
  }

  /**
   * Moves a room's bindings from a data directory's owners file: a client bound nowhere is bound
   * as the file says, one bound to the same connection is skipped, one bound to another is a
   * conflict and stays as Redis has it.
   */
  async importBindings(room: string, bindings: ReadonlyMap<number, string>): Promise<Array<{ client: number } & MoveOutcome>> {
    const key = this.key(room)
    const pairs = [...bindings]
    const out: Array<{ client: number } & MoveOutcome> = []
    for (let i = 0; i < pairs.length; i += IMPORT_BATCH) {
      const batch = pairs.slice(i, i + IMPORT_BATCH)
      const reply = await this.redis.command.sendCommand<Array<number | Buffer>>(['EVAL', IMPORT, '1', key, ...batch.flatMap(([client, connection]) => [String(client), connection])])
      batch.forEach(([client, connection], j) => {
        const held = reply[j]
        if (held === 1) out.push({ client, ...MOVED })
        else if (held?.toString() === connection) out.push({ client, ...SKIPPED })
        else out.push({ client, ...conflict(`Redis binds client ${client} of room ${room} to connection ${String(held)}, not ${connection}; left as Redis has it`) })
      })
    }
    return out
  }

  async learn(room: string, update: Uint8Array): Promise<void> {
    const owners = this.table(room)
    const unknown = [...Y.decodeStateVector(Y.encodeStateVectorFromUpdate(update)).keys()].filter((c) => !owners.has(c))
    if (unknown.length === 0) return
    const reply = await this.redis.command.sendCommand<Array<Buffer | null>>(['HMGET', this.key(room), ...unknown.map(String)])
    unknown.forEach((c, i) => {
      const owner = reply[i]
      if (owner) owners.set(c, owner.toString())
    })
  }
}
