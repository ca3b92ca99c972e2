// The public `Memory`: its connections, its sync, its visibility. Creating and opening one is
// open-memory.ts; everything it reads or changes, its engine; the package's own hosts reach
// owner-level reads and imports through owner-door.ts.
import { MemoryError } from '../core/errors'
import type { ConnectionInfo, ConnectionRecord, MemoryInfo, Tier, Visibility } from '../core/types'
import { DEFAULT_TIER, isTier, requireLiveConnection } from '../core/access'
import { isLabel } from '../core/identifiers'
import { MemoryDB, RegistryDB } from '../store/db'
import type { IndexedDBFactory } from '../store/indexeddb-factory'
import { addConnection, clearVisibilityOwed, saveConnections, stampConnection, VISIBILITY_PENDING_KEY } from '../store/commit'
import { stored } from '../store/storage-error'
import type { MemoryEngine } from './memory-engine'
import { Connection } from './connection'
import { engineBehind, registerEngine } from './engine-door'
import { MemorySync, type SyncOptions } from '../sync/memory-sync'
import { revocationChannel, type RevocationChannel } from './revocations'
import { shareConnectionsThrough, type ConnectionSharing } from './connection-sharing'
import { checkVisibilityChange, shareVisibilityThrough, storeVisibility, type VisibilitySharing } from './visibility-sharing'
import { createEngine, openEngine } from './open-memory'
import type { CreateMemoryOptions, OpenMemoryOptions } from './memory-options'
import { constantTimeEqual, randomId, randomToken, sha256Hex } from './tokens'

export type { CreateMemoryOptions, OpenMemoryOptions } from './memory-options'
export { BM25_ONLY } from '../core/types'

/** A connection's last use is stamped at most this often. */
const LAST_USED_STEP_MS = 60_000

export class Memory {
  private syncing: Promise<MemorySync> | undefined

  private readonly revocations: RevocationChannel
  /** Present while the memory keeps a sync document: its connections travel in it. */
  private visibilitySharing: VisibilitySharing | undefined
  private sharing: ConnectionSharing | undefined

  private constructor(
    private readonly engine: MemoryEngine,
    private connections: Map<string, ConnectionRecord>,
  ) {
    registerEngine(this, engine)
    // the database has the last word: a message on the channel is only a hint to look
    this.revocations = revocationChannel(engine.info.id, (id) => {
      if (!this.connections.get(id) || this.connections.get(id)!.revokedAt) return
      void this.engine.db.connections.get(id).then((row) => {
        const c = this.connections.get(id)
        if (c && !c.revokedAt && row?.revokedAt) this.connections.set(id, { ...c, revokedAt: row.revokedAt })
      }, () => undefined)
    })
  }

  /**
   * Reads a connection from storage, where another instance's revoke lands before its `revoke()`
   * resolves, and refuses it if revoked there (adopting the revoke, so later calls stop at once).
   */
  private readonly confirmLive = async (id: string): Promise<void> => {
    const row = await stored(() => this.engine.db.connections.get(id))
    const c = this.connections.get(id)
    if (c && !c.revokedAt && row?.revokedAt) this.connections.set(id, { ...c, revokedAt: row.revokedAt })
    requireLiveConnection(id, row)
  }

  /** Takes in connections other instances of this memory created or revoked since it opened. */
  private async refreshConnections(): Promise<void> {
    const rows = await stored(() => this.engine.db.connections.toArray())
    for (const row of rows) {
      const known = this.connections.get(row.id)
      if (!known || (row.revokedAt && !known.revokedAt)) this.connections.set(row.id, row)
    }
  }

  get info(): MemoryInfo {
    return structuredClone(this.engine.info)
  }

  static async create(opts: CreateMemoryOptions): Promise<Memory> {
    return new Memory(await createEngine(opts), new Map())
  }

  static open(id: string, opts: OpenMemoryOptions = {}): Promise<Memory> {
    return openEngine(id, opts, (engine, connections) => new Memory(engine, new Map(connections.map((c) => [c.id, c]))))
  }

  /**
   * Creates a connection for an agent; the token is returned once and stored only hashed. It
   * travels with the memory (as its hash) once the memory syncs, so the sync server and every
   * replica accept the token too; `localOnly` keeps it on this device (the app's own).
   */
  async connect(opts: { agent: string; tier?: Tier; localOnly?: boolean }): Promise<Connection> {
    if (!isLabel(opts?.agent)) throw new MemoryError('invalid_request', 'connect needs an agent name')
    const tier = opts.tier ?? DEFAULT_TIER
    if (!isTier(tier)) throw new MemoryError('invalid_request', 'tier is "read", "read_write" or "full"', { tier })
    const token = randomToken()
    const record: ConnectionRecord = {
      id: `conn-${randomId(10)}`,
      memoryId: this.engine.info.id,
      agent: opts.agent.trim(),
      tier,
      tokenHash: await sha256Hex(token),
      createdAt: new Date().toISOString(),
      revokedAt: null,
      ...(opts.localOnly === true ? { localOnly: true } : {}),
    }
    await addConnection(this.engine.db, record)
    this.connections.set(record.id, record)
    this.sharing?.share([record])
    return new Connection(this.engine, () => this.connections.get(record.id)!, token, this.touch, this.confirmLive)
  }

  /** Reattaches an agent that kept its token. */
  async connectWithToken(token: string): Promise<Connection> {
    const hash = typeof token === 'string' ? await sha256Hex(token) : ''
    // connections shared by other holders of the memory are taken in first
    await this.sharing?.settled()
    // another tab may have made or revoked this connection: the database has the last word
    await this.refreshConnections()
    for (const c of this.connections.values()) {
      if (constantTimeEqual(c.tokenHash, hash)) {
        if (c.revokedAt) break
        return new Connection(this.engine, () => this.connections.get(c.id)!, undefined, this.touch, this.confirmLive)
      }
    }
    throw new MemoryError('forbidden', 'this token is unknown or was revoked; ask for a new connection')
  }

  /**
   * Records when a connection was last used, at most once a minute per connection, off the
   * call's path: a lost stamp costs nothing but a slightly older "last used".
   */
  private readonly touch = (connectionId: string): void => {
    const c = this.connections.get(connectionId)
    if (!c) return
    const now = new Date()
    if (c.lastUsedAt && now.getTime() - Date.parse(c.lastUsedAt) < LAST_USED_STEP_MS) return
    const lastUsedAt = now.toISOString()
    this.connections.set(c.id, { ...c, lastUsedAt })
    const write = stampConnection(this.engine.db, c.id, lastUsedAt).catch(() => undefined)
    this.stamping.add(write)
    void write.finally(() => this.stamping.delete(write))
  }
  private readonly stamping = new Set<Promise<void>>()

  /** Adopts connections another holder of the memory made or revoked (from its sync document). */
  private async takeInShared(list: ConnectionRecord[]): Promise<void> {
    const rows = list.map((c) => {
      const known = this.connections.get(c.id)
      // a connection this device already holds keeps its own fields; only the revoke comes in
      return known ? { ...known, revokedAt: c.revokedAt } : c
    })
    for (const row of await saveConnections(this.engine.db, rows)) {
      this.connections.set(row.id, row)
      if (row.revokedAt) this.revocations.announce(row.id)
    }
  }

  listConnections(): ConnectionInfo[] {
    return [...this.connections.values()].map(({ tokenHash: _, ...c }) => c)
  }

  /** Revocation takes effect at once, also on connection handles already in use. */
  async revoke(connectionId: string): Promise<void> {
    if (!this.connections.has(connectionId)) await this.refreshConnections()
    const c = this.connections.get(connectionId)
    if (!c) throw new MemoryError('not_found', `no connection "${connectionId}"`)
    if (c.revokedAt) return
    const revoked = { ...c, revokedAt: new Date().toISOString() }
    await saveConnections(this.engine.db, [revoked])
    this.connections.set(c.id, revoked)
    this.revocations.announce(c.id)
    this.sharing?.share([revoked])
  }

  /** Persists the search index so the next open neither re-embeds nor rebuilds. */
  async saveIndex(): Promise<void> {
    await this.engine.queueSnapshot()
  }

  /**
   * Starts keeping this memory in its sync document (saved locally, shared with other tabs)
   * and, with a server URL and token, syncing it with other devices. Calling it again returns
   * the same sync, connected to the server it names, if any.
   */
  async sync(options: SyncOptions = {}): Promise<MemorySync> {
    if (!this.syncing) {
      // reconciling with the document reads every note
      this.syncing = this.engine.notesHeld().then(() => MemorySync.start(this.engine, options)).then(async (sync) => {
        await this.refreshConnections()
        this.sharing = shareConnectionsThrough(sync.doc, {
          memoryId: this.engine.info.id,
          known: () => this.connections.values(),
          takeIn: (list) => this.takeInShared(list),
        })
        const db = this.engine.db
        this.visibilitySharing = shareVisibilityThrough(sync.doc, {
          info: () => this.engine.info,
          adopt: async (v) => void (await storeVisibility(this.engine, v.visibility, v.orgId, false)),
          pending: async () => (await db.meta.get(VISIBILITY_PENDING_KEY))?.value === true,
          shared: () => clearVisibilityOwed(db),
        })
        return sync
      })
      this.syncing.catch(() => (this.syncing = undefined))
      return this.syncing
    }
    const sync = await this.syncing
    if (options.serverUrl && options.token) sync.connect({ ...options, serverUrl: options.serverUrl, token: options.token })
    return sync
  }

  /**
   * Declares which relationship types hold one target at a time (`works_at`, `lives_in`),
   * replacing the earlier list: a second current target of such a type from one source makes
   * `consolidate()` propose a supersession. The owner's act; it syncs (a `full` connection's).
   */
  setSingleValued(types: string[]): Promise<string[]> {
    return this.engine.setSingleValued(types)
  }

  /** The relationship types declared single-valued. */
  singleValued(): string[] {
    return this.engine.singleValuedTypes()
  }

  /**
   * Makes the memory organization-visible (every member of `orgId` may then list it and read
   * it) or private again. This is the owner's act: it reaches the sync server only through a
   * `full` sync connection, and the server then closes the sockets of members who may no
   * longer read it. Other devices adopt it from the sync document.
   */
  async setVisibility(visibility: Visibility, orgId?: string): Promise<MemoryInfo> {
    checkVisibilityChange(visibility, orgId)
    const sharing = this.syncing ? await this.syncing.then(() => this.visibilitySharing, () => undefined) : undefined
    await sharing?.settled()
    // Into the sync document first, so the server cuts members off without waiting for this
    // device's storage (the document keeps its own log); without a document, it is owed to it.
    sharing?.share({ visibility, orgId: visibility === 'organization' ? orgId! : null })
    return storeVisibility(this.engine, visibility, orgId, sharing === undefined)
  }

  async close(): Promise<void> {
    this.revocations.close()
    this.sharing?.stop()
    this.visibilitySharing?.stop()
    await Promise.all(this.stamping)
    if (this.syncing) await (await this.syncing.catch(() => null))?.stop()
    await this.saveIndex().catch(() => undefined)
    this.engine.close()
  }
}

/**
 * Copies a memory's observations and merges into a new memory with another retrieval config,
 * re-embedding everything. The old memory is left as it was.
 */
export async function migrateMemory(id: string, opts: CreateMemoryOptions): Promise<Memory> {
  const old = new MemoryDB(id, opts)
  const registry = new RegistryDB(opts)
  const exists = await registry.memories.get(id)
  registry.close()
  if (!exists) throw new MemoryError('not_found', `no memory with id "${id}"`, { id })
  const [observations, aliases] = await Promise.all([old.observations.toArray(), old.aliases.toArray()])
  old.close()
  const next = await Memory.create(opts)
  await engineBehind(next).importObservations(observations, aliases)
  return next
}

export async function listMemories(opts: IndexedDBFactory = {}): Promise<MemoryInfo[]> {
  const registry = new RegistryDB(opts)
  const all = await registry.memories.toArray()
  registry.close()
  return all
}
