// The sync server's connection tokens, one per agent-to-memory connection, kept in
// `<dataDir>/tokens.json`. Only sha256 hashes are stored; a presented token is hashed and
// compared in constant time against every entry. Every change re-reads the file under an
// exclusive lock file and replaces it atomically (its own temporary name, fsync, rename), so
// concurrent CLI commands and servers never lose each other's tokens or revocations; the
// file is re-read when it changes so a revoke from the CLI reaches a running server.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { isTier } from '../core/access'
import { MemoryError } from '../core/errors'
import { isLabel } from '../core/identifiers'
import { CREDENTIAL_CHARS, LABEL_CHARS } from '../core/limits'
import type { ConnectionRecord, Tier } from '../core/types'
import { ROOM_NAME } from './file-room-store'
import { fileStamp, withFileLock, writeJsonAtomic } from './json-file'

export const TOKENS_FILE = 'tokens.json'
const TOKEN_PREFIX = 'cairn_'

export interface NewToken {
  /** Shown once; only its hash is kept. */
  token: string
  connection: ConnectionRecord
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Whether a value is a whole connection record, as the token file keeps it. */
export function isConnection(value: unknown): value is ConnectionRecord {
  if (typeof value !== 'object' || value === null) return false
  const c = value as Record<string, unknown>
  return typeof c.id === 'string' && typeof c.memoryId === 'string' && typeof c.agent === 'string' && isTier(c.tier) &&
    typeof c.tokenHash === 'string' && /^[0-9a-f]{64}$/.test(c.tokenHash) && typeof c.createdAt === 'string' &&
    (c.revokedAt === null || typeof c.revokedAt === 'string')
}

export class TokenRegistry {
  private connections: ConnectionRecord[] = []
  /** The file's identity when last read, so `reloadIfChanged` costs a stat when nothing changed. */
  private seen = ''
  private readonly revokeListeners = new Set<(connection: ConnectionRecord) => void>()

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true })
    this.connections = this.readFile()
  }

  private stamp(): string {
    return fileStamp(this.file)
  }

  private readFile(): ConnectionRecord[] {
    this.seen = this.stamp()
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw new MemoryError('storage_failed', `cannot read the token registry ${this.file}: ${(err as Error).message}`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new MemoryError('storage_failed', `the token registry ${this.file} is not valid JSON; restore it from a backup or move it away to start with no tokens`)
    }
    const list = (parsed as { connections?: unknown }).connections
    if (!Array.isArray(list)) throw new MemoryError('storage_failed', `the token registry ${this.file} has no "connections" list`)
    return list.filter(isConnection)
  }

  private writeFile(): void {
    writeJsonAtomic(this.file, { version: 1, connections: this.connections })
  }

  /** Runs a read-modify-write of the file while holding `<file>.lock`. */
  private locked<T>(change: () => T): T {
    return withFileLock(this.file, 'the token registry', () => {
      this.reload()
      return change()
    })
  }

  /** Re-reads the file when it changed since it was last read (a stat, otherwise). */
  reloadIfChanged(): void {
    if (this.stamp() !== this.seen) this.reload()
  }

  /** Re-reads the file (another process may have changed it) and reports newly revoked connections. */
  reload(): void {
    const before = new Map(this.connections.map((c) => [c.id, c]))
    this.connections = this.readFile()
    for (const c of this.connections) {
      if (c.revokedAt !== null && before.get(c.id)?.revokedAt === null) this.emitRevoked(c)
    }
  }

  add(input: { memoryId: string; tier?: Tier; agent: string }): NewToken {
    const { token, connection } = newConnection(input)
    return this.locked(() => {
      this.connections.push(connection)
      this.writeFile()
      return { token, connection }
    })
  }

  /** Revokes a connection by id; its open sockets are closed by whoever listens (the server). */
  revoke(id: string): ConnectionRecord {
    const { c, changed } = this.locked(() => {
      const c = this.connections.find((x) => x.id === id)
      if (!c) throw new MemoryError('not_found', `no connection "${id}"; list them with \`token list\``, { id })
      if (c.revokedAt !== null) return { c, changed: false }
      c.revokedAt = new Date().toISOString()
      this.writeFile()
      return { c, changed: true }
    })
    if (changed) this.emitRevoked(c)
    return { ...c }
  }

  list(memoryId?: string): ConnectionRecord[] {
    return this.connections.filter((c) => memoryId === undefined || c.memoryId === memoryId).map((c) => ({ ...c }))
  }

  /** The connection a token belongs to (revoked ones included, so callers can say why), or null. */
  verify(token: string): ConnectionRecord | null {
    if (typeof token !== 'string' || token.length === 0 || token.length > CREDENTIAL_CHARS) return null
    const hash = hashToken(token)
    let found: ConnectionRecord | null = null
    // No early exit: every entry is compared, so timing does not depend on which one matched.
    for (const c of this.connections) {
      if (sameHash(c.tokenHash, hash)) found = c
    }
    return found ? { ...found } : null
  }

  isRevoked(id: string): boolean {
    return this.connections.find((c) => c.id === id)?.revokedAt != null
  }

  onRevoked(listener: (connection: ConnectionRecord) => void): () => void {
    this.revokeListeners.add(listener)
    return () => this.revokeListeners.delete(listener)
  }

  private emitRevoked(c: ConnectionRecord): void {
    for (const l of this.revokeListeners) l({ ...c })
  }
}

/** A new connection and its token, checked: the rules every token store applies. */
export function newConnection(input: { memoryId: string; tier?: Tier; agent: string }): NewToken {
  const tier = input.tier ?? 'read_write'
  if (!isTier(tier)) throw new MemoryError('invalid_request', `tier must be read, read_write or full, not "${String(tier)}"`)
  if (typeof input.memoryId !== 'string' || !ROOM_NAME.test(input.memoryId)) {
    throw new MemoryError('invalid_request', 'memory id must be 1-128 letters, digits, "-" or "_", starting with a letter or digit')
  }
  const agent = typeof input.agent === 'string' ? input.agent.trim() : ''
  if (!isLabel(agent)) throw new MemoryError('invalid_request', `agent must be a name of 1-${LABEL_CHARS} characters`)
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url')
  const connection: ConnectionRecord = {
    id: `conn_${randomBytes(6).toString('hex')}`,
    memoryId: input.memoryId,
    agent,
    tier,
    tokenHash: hashToken(token),
    createdAt: new Date().toISOString(),
    revokedAt: null,
  }
  return { token, connection }
}
