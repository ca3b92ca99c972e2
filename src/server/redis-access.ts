// Connection tokens in Redis, shared by every sync server: `<prefix>conn` maps a connection id
// to its record, `<prefix>token` a token's sha256 to its connection id, `<prefix>revoked` a
// revoked id to when. A revoke is published on `<prefix>revocations`, so each server closes
// that connection's sockets at once; a server that was disconnected re-reads the revoked set.
import { isTier } from '../core/access'
import { MemoryError } from '../core/errors'
import { CREDENTIAL_CHARS } from '../core/limits'
import type { ConnectionRecord, Tier } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import type { AccessSource } from './access-source'
import type { SyncLog } from './log'
import type { RedisConnection } from './redis-connection'
import type { AuthResult } from './auth-result'
import { compareHeld, conflict, MOVED, type MoveOutcome } from './redis-import'
import { hashToken, newConnection, type NewToken } from './token-registry'

const AUTHORIZE_TIMEOUT_MS = 3_000

// One round trip: marks the connection revoked (the first time wins) and tells every server.
const REVOKE = `
local c = redis.call('HGET', KEYS[1], ARGV[1])
if not c then return false end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('PUBLISH', KEYS[3], ARGV[1])
return {c, redis.call('HGET', KEYS[2], ARGV[1])}
`

// Adds a connection record as it is (its id, token hash and revocation) unless Redis knows its
// id or its token hash already; then answers what Redis holds for them instead.
const IMPORT = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local owner = redis.call('HGET', KEYS[2], ARGV[3])
if cur or owner then return {cur or '', redis.call('HGET', KEYS[3], ARGV[1]) or '', owner or ''} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
  redis.call('PUBLISH', KEYS[4], ARGV[1])
end
return 1
`

function parseConnection(raw: Buffer | null, revokedAt: Buffer | null): ConnectionRecord | null {
  if (!raw) return null
  try {
    const c = JSON.parse(raw.toString()) as ConnectionRecord
    if (typeof c.id !== 'string' || typeof c.memoryId !== 'string' || !isTier(c.tier)) return null
    return { ...c, revokedAt: revokedAt ? revokedAt.toString() : null }
  } catch {
    return null
  }
}

export class RedisAccess implements AccessSource {
  private readonly revoked = new Set<string>()
  /** Connections this server authorized, for the log line of their revocation. */
  private readonly seen = new Map<string, ConnectionRecord>()
  private readonly listeners = new Set<(c: ConnectionRecord) => void>()
  private readonly keys: { conn: string; token: string; revoked: string; channel: string }
  private readonly log: SyncLog
  private closed = false

  private constructor(private readonly redis: RedisConnection, prefix: string, log: SyncLog) {
    this.keys = { conn: `${prefix}conn`, token: `${prefix}token`, revoked: `${prefix}revoked`, channel: `${prefix}revocations` }
    this.log = log
  }

  /** `watch`: follow revocations (a server); an admin command leaves it off. */
  static async open(redis: RedisConnection, options: { prefix?: string; log?: SyncLog; watch?: boolean } = {}): Promise<RedisAccess> {
    const access = new RedisAccess(redis, options.prefix ?? 'cairn:', options.log ?? (() => {}))
    if (options.watch !== false) await access.watch()
    return access
  }

  private async watch(): Promise<void> {
    await this.redis.subscriber.subscribe(this.keys.channel, (message) => {
      this.revokedElsewhere(message.toString())
    })
    // Messages published while the subscriber was reconnecting are lost: re-read the set.
    this.redis.subscriber.on('ready', () => {
      if (!this.closed) void this.reloadRevoked()
    })
    await this.reloadRevoked()
  }

  private async reloadRevoked(): Promise<void> {
    try {
      const ids = await this.redis.command.sendCommand<Buffer[]>(['HKEYS', this.keys.revoked])
      for (const id of ids) this.revokedElsewhere(id.toString())
    } catch (err) {
      this.log('warn', 'revocations_reload_failed', { error: (err as Error).message })
    }
  }

  private revokedElsewhere(id: string): void {
    if (this.revoked.has(id)) return
    this.revoked.add(id)
    // Sockets close on the id alone, at once; a connection this server never saw gets a bare record.
    const known = this.seen.get(id)
    const connection: ConnectionRecord = { ...(known ?? { id, memoryId: '', agent: '', tier: 'read', tokenHash: '', createdAt: '' }), revokedAt: new Date().toISOString() }
    for (const l of this.listeners) l(connection)
  }

  async authorize(token: string | null, room: string): Promise<AuthResult> {
    if (!token) return { ok: false, code: CLOSE.unauthorized, reason: 'a connection token is required (?token=...)' }
    if (token.length > CREDENTIAL_CHARS) return { ok: false, code: CLOSE.unauthorized, reason: 'unknown connection token' }
    let connection: ConnectionRecord | null
    try {
      // Looked up by the token's sha256: finding it says nothing about any other token.
      // While Redis is away the socket gets 4500 (retried) instead of waiting on the client's queue.
      const bounded = { timeout: AUTHORIZE_TIMEOUT_MS }
      const id = await this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.token, hashToken(token)], bounded)
      if (!id) return { ok: false, code: CLOSE.unauthorized, reason: 'unknown connection token' }
      const [raw, at] = await Promise.all([
        this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.conn, id], bounded),
        this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.revoked, id], bounded),
      ])
      connection = parseConnection(raw, at)
    } catch (err) {
      this.log('warn', 'authorize_unavailable', { error: (err as Error).message })
      return { ok: false, code: CLOSE.unavailable, reason: 'the token directory is unavailable; try again later' }
    }
    if (!connection) return { ok: false, code: CLOSE.unauthorized, reason: 'unknown connection token' }
    if (connection.revokedAt !== null || this.revoked.has(connection.id)) return { ok: false, code: CLOSE.revoked, reason: 'this connection token was revoked' }
    if (connection.memoryId !== room) return { ok: false, code: CLOSE.forbidden, reason: 'this token belongs to another memory' }
    this.seen.set(connection.id, connection)
    return { ok: true, connection }
  }

  isRevoked(connectionId: string): boolean {
    return this.revoked.has(connectionId)
  }

  onRevoked(listener: (connection: ConnectionRecord) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async add(input: { memoryId: string; tier?: Tier; agent: string }): Promise<NewToken> {
    const made = newConnection(input)
    const { connection } = made
    await this.redis.command.sendCommand(['HSET', this.keys.conn, connection.id, JSON.stringify(connection)])
    // The token becomes usable only once its record exists.
    await this.redis.command.sendCommand(['HSET', this.keys.token, connection.tokenHash, connection.id])
    return made
  }

  async revoke(id: string): Promise<ConnectionRecord> {
    const reply = await this.redis.command.sendCommand<[Buffer, Buffer] | null>(['EVAL', REVOKE, '3', this.keys.conn, this.keys.revoked, this.keys.channel, id, new Date().toISOString()])
    const c = reply ? parseConnection(reply[0], reply[1]) : null
    if (!c) throw new MemoryError('not_found', `no connection "${id}"; list them with \`token list\``, { id })
    return c
  }

  /**
   * Moves a connection record from a data directory's token file as it is (same id, token hash,
   * revocation): stored when Redis knows neither its id nor its token hash, skipped when Redis
   * holds the same record, a conflict (nothing written) when it holds another.
   */
  async importConnection(c: ConnectionRecord): Promise<MoveOutcome> {
    // the record is kept unrevoked, as `add` keeps it; a revocation lives in the revoked hash
    const stored = JSON.stringify({ ...c, revokedAt: null })
    const reply = await this.redis.command.sendCommand<number | [Buffer, Buffer, Buffer]>(['EVAL', IMPORT, '4', this.keys.conn, this.keys.token, this.keys.revoked, this.keys.channel, c.id, stored, c.tokenHash, c.revokedAt ?? ''])
    if (reply === 1) return MOVED
    const [raw, at, owner] = reply as [Buffer, Buffer, Buffer]
    if (owner.length > 0 && owner.toString() !== c.id) return conflict(`Redis holds its token hash for connection ${owner.toString()}; left as Redis has it`)
    const held = parseConnection(raw.length > 0 ? raw : null, at.length > 0 ? at : null)
    if (!held) return conflict(`Redis indexes its token hash but holds no readable record of ${c.id}; left as Redis has it`)
    return compareHeld(`connection ${c.id}`, held, c)
  }

  async list(memoryId?: string): Promise<ConnectionRecord[]> {
    const [conns, revoked] = await Promise.all([
      this.redis.command.sendCommand<Buffer[]>(['HGETALL', this.keys.conn]),
      this.redis.command.sendCommand<Buffer[]>(['HGETALL', this.keys.revoked]),
    ])
    const revokedAt = new Map<string, Buffer>()
    for (let i = 0; i + 1 < revoked.length; i += 2) revokedAt.set(revoked[i]!.toString(), revoked[i + 1]!)
    const out: ConnectionRecord[] = []
    for (let i = 0; i + 1 < conns.length; i += 2) {
      const c = parseConnection(conns[i + 1]!, revokedAt.get(conns[i]!.toString()) ?? null)
      if (c && (memoryId === undefined || c.memoryId === memoryId)) out.push(c)
    }
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    if (this.redis.subscriber.isOpen) await this.redis.subscriber.unsubscribe(this.keys.channel).catch(() => {})
  }
}
