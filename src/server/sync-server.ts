// Puts the sync server together: one Yjs room per memory on @y/websocket-server, with a
// connection token checked on every socket, a tier gate on every update, and embedded
// persistence; each job lives in its own module (rooms, auth, cuts, socket admission, HTTP
// routes), and this one composes them, listens, closes, and offers the admin surface.
//
// Seams for a larger deployment: `store` (a RoomStore: where room history lives) and
// `authorize` (who a token is and what it may do), or `redis`, which fills both (and keeps the
// organizations) in a Redis that several servers share. See docs/sync.md, "Several sync servers on one Redis".
import { join } from 'node:path'
import { MemoryError } from '../core/errors'
import type { ConnectionRecord, Tier } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import type { AccessSource, TokenAdmin } from './access-source'
import { composeAuthorize, type AuthSources } from './auth'
import type { Authorize } from './auth-result'
import { ClientOwners, type OwnerTable } from './client-owners'
import { sharedKey, SocketCuts } from './cuts'
import { watchDataDir } from './data-dir-watch'
import { FileRoomStore } from './file-room-store'
import { DEFAULT_BUDGET, type Budget, type BudgetWindow } from './connection-budget'
import type { GatedSocket } from './gated-socket'
import { claimHandler } from './claim'
import { serveHttp } from './http-routes'
import { jsonLineLog, type SyncLog } from './log'
import { memberListing } from './member-listing'
import { OrgMemories, type OrgMemory } from './org-memories'
import { ORGS_FILE, OrgRegistry, type OrgAdmin } from './org-registry'
import { fileOrgMemoryIndex, fileOrgSource, type OrgDirectory, type OrgMemoryIndex, type OrgSource } from './org-store'
import type { RedisOptions } from './redis-backend'
import type { RoomStore } from './room-store'
import { RoomThread } from './room-thread'
import { Rooms } from './rooms'
import { admitSocket } from './socket-admission'
import { TOKENS_FILE, TokenRegistry, type NewToken } from './token-registry'

export type { AuthResult, Authorize } from './auth-result'

export interface SyncServerOptions {
  /** Default 127.0.0.1. Binding another interface exposes the server: put TLS in front of it. */
  host?: string
  /** 0 picks a free port. */
  port?: number
  /** Holds `tokens.json` and `rooms/`. */
  dataDir: string
  store?: RoomStore
  authorize?: Authorize
  log?: SyncLog
  /**
   * Largest WebSocket message read, in bytes; larger ones close the socket (1009). Default: one
   * file's bytes in an update (clients send a large update, such as a first sync, in pieces).
   */
  maxMessageBytes?: number
  /**
   * Rooms, tokens, client-id owners and organizations in a Redis shared with other servers (a
   * URL, or options) instead of the data directory; replaces `store` and `authorize`. Manage
   * its tokens through `access` and its organizations through `organizations`.
   */
  redis?: string | RedisOptions
  /**
   * Make every accepted update durable in the room store (the file store's group commit, or
   * Redis's fsynced AOF) before peers receive it; default true. False relays first and stores
   * after, as the room store gets to it (the bench compares both).
   */
  persistBeforeBroadcast?: boolean
  /** Per-connection limits: update bytes per second, refused updates per window, the size of one update. */
  budget?: Partial<Budget>
  /**
   * The key that claims a memory this server does not hold yet (`POST /claim`, src/server/claim.ts),
   * so its first device needs no `token add`; without one (the default) only issued tokens bring a memory here.
   */
  claimKey?: string
}

export interface SyncServer {
  host: string
  port: number
  /** `ws://host:port`, the serverUrl for the client. */
  url: string
  /** The token file of the data directory; with `redis`, these throw: use `access`. */
  tokens: {
    add(input: { memoryId: string; tier?: Tier; agent: string }): NewToken
    revoke(id: string): ConnectionRecord
    list(memoryId?: string): ConnectionRecord[]
  }
  /** The tokens this server checks, wherever they live (the token file, or Redis). */
  access: TokenAdmin
  /**
   * Organizations and their members (`orgs.json` in the data directory), and the memories each
   * may read. Not with `redis` or a custom `authorize`: these throw there (use `organizations`).
   */
  orgs: OrgAdmin & { memories(orgId: string): OrgMemory[] }
  /**
   * The organizations this server checks, wherever they live (the data directory, or Redis,
   * shared by every server on it), and the memories visible to each. Not with a custom
   * `authorize`: these reject there.
   */
  organizations: OrgDirectory & { memories(orgId: string): Promise<OrgMemory[]> }
  /** The room's current state as one update (a loaded room) or what storage holds, or null. */
  roomState(room: string): Promise<Uint8Array | null>
  close(): Promise<void>
}

export async function startSyncServer(options: SyncServerOptions): Promise<SyncServer> {
  const host = options.host ?? '127.0.0.1'
  const log = options.log ?? jsonLineLog
  if (options.redis !== undefined && (options.store || options.authorize)) {
    throw new MemoryError('invalid_request', 'pass either redis or store/authorize: redis provides both')
  }
  // Loaded only when asked for, so a single-machine server needs no Redis client.
  const redis = options.redis === undefined ? undefined : await (await import('./redis-backend')).openRedisBackend(typeof options.redis === 'string' ? { url: options.redis } : options.redis, log)
  const access: AccessSource | undefined = redis?.access
  // Whole-room work (a new client's missing state, a log's merge) runs on a second thread.
  const thread = new RoomThread(log)
  const store: RoomStore = redis?.store ?? options.store ?? new FileRoomStore(options.dataDir, { log, offload: thread })
  const registry = new TokenRegistry(join(options.dataDir, TOKENS_FILE))
  // Organizations live beside the token file, or in Redis with the rooms; a deployment with its own authorize has none.
  const fileOrgsEnabled = !redis && options.authorize === undefined
  const orgRegistry = fileOrgsEnabled ? new OrgRegistry(join(options.dataDir, ORGS_FILE)) : undefined
  const orgIndex = fileOrgsEnabled ? new OrgMemories(options.dataDir, log) : undefined
  const orgs: OrgSource | undefined = redis?.orgs ?? (orgRegistry && fileOrgSource(orgRegistry))
  const orgMemories: OrgMemoryIndex | undefined = redis?.orgMemories ?? (orgIndex && fileOrgMemoryIndex(orgIndex))
  // Servers sharing Redis share the owner table too: a device may reconnect to any of them.
  const owners: OwnerTable = redis?.owners ?? new ClientOwners(options.dataDir)
  const persistFirst = options.persistBeforeBroadcast !== false
  const budget: Budget = { ...DEFAULT_BUDGET, ...options.budget }

  const rooms: Rooms = new Rooms({
    store, thread, owners, log, persistFirst,
    watchers: {
      revoked: (connection, key) => cuts.revoked(connection, sharedKey(connection.memoryId, key)),
      visibility: (room, v, change) => {
        if (change) cuts.visibilityChanged(room, v)
        // the index's fsync comes after the cut (a listing checks a loaded room's own document)
        orgMemories?.note(room, v, change?.by)
      },
    },
  })
  const cuts = new SocketCuts(rooms, orgs, log)
  registry.onRevoked((c) => cuts.revoked(c))
  access?.onRevoked((c) => cuts.revoked(c))
  orgs?.onUnlisted((orgId, room) => cuts.unlisted(orgId, room))
  orgs?.onMemberRemoved((org, member) => cuts.memberRemoved(org.id, member))

  const sources: AuthSources = { custom: options.authorize, access, registry, orgs, orgMemories, rooms, cuts, log }
  const gates = new Set<GatedSocket>()
  const authorize = composeAuthorize(sources)
  const admission = { ...sources, authorize, owners, thread, budget, windows: new Map<string, BudgetWindow>(), gates, persistFirst }
  let closing: Promise<void> | undefined
  const tokenAdmin: TokenAdmin = access ?? {
    add: async (input) => registry.add(input),
    revoke: async (connectionId) => registry.revoke(connectionId),
    list: async (memoryId) => registry.list(memoryId),
  }
  const claim = options.claimKey === undefined || options.authorize !== undefined ? undefined : claimHandler({
    claimKey: options.claimKey,
    tokens: tokenAdmin,
    roomHasConnections: async (memoryId) => (await rooms.access(memoryId)).connections.size > 0,
    log,
  })
  const { http, wss } = serveHttp({
    listing: memberListing(orgs, orgMemories, rooms, authorize, log),
    ...(claim ? { claim } : {}),
    // a little over the largest update, for the message's own header
    maxPayload: options.maxMessageBytes ?? Math.max(budget.update.maxBytes, budget.update.maxStructBytes, budget.update.maxFileBytes) + 1024,
    closing: () => closing !== undefined,
    onSocket: (ws, req) => {
      admitSocket(admission, ws, req).catch((err: unknown) => {
        log('error', 'connection_failed', { error: (err as Error).message })
        ws.close(CLOSE.unavailable, 'internal error')
      })
    },
  })
  const unwatch = options.authorize === undefined && !access ? watchDataDir(options.dataDir, registry, orgRegistry, log) : () => {}

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject)
      resolve()
    })
  }).catch(async (err: unknown) => {
    // A port in use: release the Redis connections too, or the process would not exit.
    unwatch()
    await store.close().catch(() => {})
    await thread.terminate()
    await access?.close().catch(() => {})
    await orgs?.close().catch(() => {})
    await redis?.close().catch(() => {})
    rooms.release()
    throw err
  })
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0)
  log('info', 'listening', { host, port, dataDir: options.dataDir })

  const fileOrgs = () => {
    if (!orgRegistry || !orgIndex) throw new MemoryError('invalid_request', redis ? 'this server keeps its organizations in Redis: use server.organizations (or `org ... --redis <url>`)' : 'organizations are kept in the data directory of a server without redis or a custom authorize')
    return { orgs: orgRegistry, orgMemories: orgIndex }
  }
  const anyOrgs = async () => {
    if (!orgs || !orgMemories) throw new MemoryError('invalid_request', 'a server with a custom authorize keeps no organizations')
    return { orgs, orgMemories }
  }

  const fileTokens = () => {
    if (access) throw new MemoryError('invalid_request', 'this server keeps its tokens in Redis: use server.access (or `token ... --redis <url>`)')
    return registry
  }

  async function close(): Promise<void> {
    unwatch()
    const open = [...wss.clients]
    await Promise.all(open.map((ws) => new Promise<void>((resolve) => {
      if (ws.readyState === ws.CLOSED) return resolve()
      const timer = setTimeout(() => ws.terminate(), 500)
      ws.once('close', () => {
        clearTimeout(timer)
        resolve()
      })
      ws.close(CLOSE.goingAway, 'server shutting down')
    })))
    // what the clients sent before the close is still checked and stored
    await Promise.all([...gates].map((g) => g.idle()))
    await rooms.unloadAll()
    await store.close()
    await thread.terminate()
    await access?.close()
    await orgs?.close()
    await redis?.close()
    rooms.release()
    // sockets accepted while the first ones were closing would keep the HTTP server open
    for (const ws of wss.clients) ws.terminate()
    await new Promise<void>((resolve) => {
      wss.close(() => resolve())
    })
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }

  return {
    host,
    port,
    url: `ws://${host}:${port}`,
    tokens: {
      add: (input) => fileTokens().add(input),
      revoke: (connectionId) => fileTokens().revoke(connectionId),
      list: (memoryId) => fileTokens().list(memoryId),
    },
    access: tokenAdmin,
    orgs: {
      create: (name) => fileOrgs().orgs.create(name),
      addMember: (orgId, input) => fileOrgs().orgs.addMember(orgId, input),
      removeMember: (orgId, memberId) => fileOrgs().orgs.removeMember(orgId, memberId),
      list: () => fileOrgs().orgs.list(),
      accept: (orgId, memoryId) => fileOrgs().orgs.accept(orgId, memoryId),
      unlist: (orgId, memoryId) => fileOrgs().orgs.unlist(orgId, memoryId),
      memories: (orgId) => fileOrgs().orgMemories.of(orgId),
    },
    organizations: {
      create: async (name) => (await anyOrgs()).orgs.create(name),
      addMember: async (orgId, input) => (await anyOrgs()).orgs.addMember(orgId, input),
      removeMember: async (orgId, memberId) => (await anyOrgs()).orgs.removeMember(orgId, memberId),
      list: async () => (await anyOrgs()).orgs.list(),
      accept: async (orgId, memoryId) => (await anyOrgs()).orgs.accept(orgId, memoryId),
      unlist: async (orgId, memoryId) => (await anyOrgs()).orgs.unlist(orgId, memoryId),
      memories: async (orgId) => (await anyOrgs()).orgMemories.of(orgId),
    },
    roomState: (room) => rooms.state(room),
    close: () => (closing ??= close()),
  }
}
