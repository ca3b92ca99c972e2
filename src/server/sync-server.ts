// The sync server: one Yjs room per memory on @y/websocket-server, with a connection token
// checked on every socket, a tier gate on every update, and embedded persistence.
//
// Seams for a larger deployment: `store` (a RoomStore: where room history lives) and
// `authorize` (who a token is and what it may do), or `redis`, which fills both from a Redis
// that several servers share. See docs/sync.md, "Several sync servers on one Redis".
import { watch, type FSWatcher } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { docs, setPersistence, setupWSConnection, type WSSharedDoc } from '@y/websocket-server/utils'
import { WebSocketServer, type WebSocket } from 'ws'
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import type { ConnectionRecord, Tier } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import { FileRoomStore, ROOM_NAME } from './file-room-store'
import type { AccessSource, TokenAdmin } from './access-source'
import { ClientOwners, type OwnerTable } from './client-owners'
import { DEFAULT_BUDGET, GatedSocket, newBudgetWindow, type Budget, type BudgetWindow } from './gated-socket'
import { jsonLineLog, type SyncLog } from './log'
import type { RedisOptions } from './redis-backend'
import type { RoomStore } from './room-store'
import { RoomThread } from './room-thread'
import { noteLoadedState } from './update-policy'
import { TOKENS_FILE, TokenRegistry, type NewToken } from './token-registry'
import { checkSharedConnection, readSharedConnections, sharedConnectionsMap, type SharedConnection } from '../sync/shared-connections'
import { sharedConnectionOf } from './shared-access'
import { claimHandler } from './claim'
import { ORGS_FILE, OrgRegistry, type OrgAdmin } from './org-registry'
import { OrgMemories, type OrgMemory } from './org-memories'
import { readVisibility, visibilityMap, visibleTo, type SharedVisibility } from '../sync/visibility'

/**
 * `shared`: a connection the memory holds in its own document (the memory's owner made it), not a server token.
 * `member`: an organization member's credential, for a memory visible to that organization (always `read`).
 */
export type AuthResult = { ok: true; connection: ConnectionRecord; shared?: boolean; member?: { orgId: string } } | { ok: false; code: number; reason: string }

/** Decides who a socket is. The default checks the token registry in the data directory. */
export type Authorize = (token: string | null, room: string) => AuthResult | Promise<AuthResult>

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
   * Rooms, tokens and client-id owners in a Redis shared with other servers (a URL, or
   * options) instead of the data directory; replaces `store` and `authorize`. Manage its
   * tokens through `access`.
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
   * may read. Not with `redis` or a custom `authorize`: these throw there.
   */
  orgs: OrgAdmin & { memories(orgId: string): OrgMemory[] }
  /** The room's current state as one update (a loaded room) or what storage holds, or null. */
  roomState(room: string): Promise<Uint8Array | null>
  close(): Promise<void>
}

const sharedKey = (room: string, id: string) => `${room}\u0000${id}`
/** Member ids are the registry's own (`mem-...`), apart from every connection id. */
const memberKey = (memberId: string) => `\u0000member\u0000${memberId}`

// @y/websocket-server keeps rooms and the persistence hook in module state. Every server in
// this process names its rooms `<instance>/<room>`, and one hook dispatches to the owner.
interface Instance {
  bind(room: string, doc: WSSharedDoc): void
  unbind(room: string, doc: WSSharedDoc): Promise<void>
}
const instances = new Map<string, Instance>()
let nextInstance = 0
const STORE_ORIGIN = Symbol('room-store')

/**
 * Applies a room's stored state before anyone is connected, without its update listeners: the
 * room code's would encode the whole state again (for the room's size in time) to relay it to
 * no one. Ours are attached afterwards.
 */
function applyLoadedState(doc: Y.Doc, state: Uint8Array): void {
  const observers = (doc as unknown as { _observers?: unknown })._observers
  const listeners = observers instanceof Map ? observers.get('update') : undefined
  if (listeners) (observers as Map<string, unknown>).delete('update')
  try {
    Y.applyUpdate(doc, state, STORE_ORIGIN)
  } finally {
    if (listeners) (observers as Map<string, unknown>).set('update', listeners)
  }
}

function splitDocName(docName: string): { instance: Instance | undefined; room: string } {
  const slash = docName.indexOf('/')
  return { instance: instances.get(docName.slice(0, slash)), room: docName.slice(slash + 1) }
}

setPersistence({
  provider: null,
  bindState: (docName, doc) => {
    const { instance, room } = splitDocName(docName)
    instance?.bind(room, doc)
  },
  writeState: async (docName, doc) => {
    const { instance, room } = splitDocName(docName)
    await instance?.unbind(room, doc)
  },
})

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
  // Organizations live beside the token file; a deployment on Redis or its own authorize has none.
  const orgsEnabled = !redis && options.authorize === undefined
  const orgs = orgsEnabled ? new OrgRegistry(join(options.dataDir, ORGS_FILE)) : undefined
  const orgMemories = orgsEnabled ? new OrgMemories(options.dataDir, log) : undefined
  // Servers sharing Redis share the owner table too: a device may reconnect to any of them.
  const owners: OwnerTable = redis?.owners ?? new ClientOwners(options.dataDir)
  const persistFirst = options.persistBeforeBroadcast !== false
  const id = `s${nextInstance++}`
  const docName = (room: string) => `${id}/${room}`

  const preloaded = new Map<string, Uint8Array | null>()
  const loading = new Map<string, Promise<void>>()
  const unloading = new Set<Promise<void>>()
  const sockets = new Map<string, Set<WebSocket>>()
  /** The room each socket of `sockets` is in (a member's sockets span rooms). */
  const roomOf = new WeakMap<WebSocket, string>()
  /** Organization members' sockets by room, so making a memory private closes them at once. */
  const memberSockets = new Map<string, Set<{ ws: WebSocket; orgId: string }>>()
  const gates = new Set<GatedSocket>()
  // Budgets are per connection, so opening more sockets with one token buys nothing.
  const windows = new Map<string, BudgetWindow>()
  const budget: Budget = { ...DEFAULT_BUDGET, ...options.budget }

  const unsubscribes = new Map<string, () => void>()
  instances.set(id, {
    bind(room, doc) {
      const state = preloaded.get(room)
      preloaded.delete(room)
      if (state) applyLoadedState(doc, state)
      // the room's first judged update builds its copy from the same bytes, so the thread gets its own
      if (state) noteLoadedState(doc, state)
      thread.open(room, doc, state ? state.slice() : null)
      doc.on('update', (update: Uint8Array) => thread.update(room, doc, update))
      storedConnections.delete(room)
      // A revoke written into the memory's own connections (by its owner, on any server) closes
      // that connection's sockets here. After the update is relayed, so the revoked replica
      // still hears of its revoke before its socket closes.
      sharedConnectionsMap(doc).observe((event) => {
        for (const key of event.keysChanged) {
          const r = checkSharedConnection(key, sharedConnectionsMap(doc).get(key))
          if (r.ok && r.value.revokedAt !== null) setImmediate(() => onRevoked({ ...r.value, memoryId: room }, sharedKey(room, key)))
        }
      })
      // The room's visibility: noted for listing, and a memory made private (or given to another
      // organization) closes the sockets of members who may no longer read it, after the update is relayed.
      orgMemories?.note(room, readVisibility(doc))
      visibilityMap(doc).observe((event) => {
        // who made the change, when a socket did: the listing says who published the memory
        const origin = event.transaction.origin
        const by = origin instanceof GatedSocket ? origin.connection.agent : undefined
        setImmediate(() => {
          // read when the relay is done: the last of several changes in one turn wins
          const v = readVisibility(doc)
          onVisibility(room, v)
          // the index's fsync comes after the cut (a listing checks a loaded room's own document)
          orgMemories?.note(room, v, by)
        })
      })
      doc.on('update', (update: Uint8Array, origin: unknown) => {
        // A socket's updates were stored before they reached the room.
        if (origin !== STORE_ORIGIN && !(persistFirst && origin instanceof GatedSocket)) store.append(room, update)
      })
      // Updates that clients of other servers sent reach this room's clients through the store.
      // The owners of the client ids they carry are learned first (the other server recorded
      // them before it stored the update), so this server judges those ids as the owner's.
      let arriving: Promise<void> = Promise.resolve()
      const unsubscribe = store.subscribe?.(room, (update) => {
        if (!owners.learn) return Y.applyUpdate(doc, update, STORE_ORIGIN)
        arriving = arriving.then(() => owners.learn!(room, update)).catch((err: unknown) => {
          log('error', 'owners_learn_failed', { room, error: (err as Error).message })
        }).then(() => {
          if (docs.get(docName(room)) === doc) Y.applyUpdate(doc, update, STORE_ORIGIN)
        })
      })
      if (unsubscribe) unsubscribes.set(room, unsubscribe)
    },
    unbind(room, doc) {
      thread.close(room, doc)
      storedConnections.delete(room)
      unsubscribes.get(room)?.()
      unsubscribes.delete(room)
      const done = store.flush(room).then(() => store.compact(room)).catch((err: unknown) => {
        log('error', 'room_unload_failed', { room, error: (err as Error).message })
      })
      unloading.add(done)
      return done.finally(() => unloading.delete(done))
    },
  })

  const serverAuthorize: Authorize = options.authorize ?? (access ? (token, room) => access.authorize(token, room) : (token, room) => {
    if (!token) return { ok: false, code: CLOSE.unauthorized, reason: 'a connection token is required (?token=...)' }
    let connection = registry.verify(token)
    if (!connection) {
      registry.reload()
      connection = registry.verify(token)
    }
    if (!connection) return { ok: false, code: CLOSE.unauthorized, reason: 'unknown connection token' }
    if (connection.revokedAt !== null) return { ok: false, code: CLOSE.revoked, reason: 'this connection token was revoked' }
    if (connection.memoryId !== room) return { ok: false, code: CLOSE.forbidden, reason: 'this token belongs to another memory' }
    return { ok: true, connection }
  })

  // A room that is not loaded is read from storage to authorize a memory's own connection;
  // what was read is kept briefly (and per room only), so unknown tokens sent again and again
  // cost one read of the room, not one each. A room that loads here drops its entry.
  const storedConnections = new Map<string, { at: number; connections: Promise<RoomAccess> }>()
  const STORED_CONNECTIONS_MS = 2_000
  const STORED_CONNECTIONS_ROOMS = 256

  interface RoomAccess {
    connections: Map<string, SharedConnection>
    visibility: SharedVisibility | null
  }
  const accessOf = (doc: Y.Doc): RoomAccess => ({ connections: readSharedConnections(doc), visibility: readVisibility(doc) })

  /** The memory's connections and visibility as the room holds them: the live document, or what storage holds. */
  async function roomAccess(room: string): Promise<RoomAccess> {
    const live = docs.get(docName(room))
    if (live) return accessOf(live)
    const kept = storedConnections.get(room)
    if (kept && Date.now() - kept.at < STORED_CONNECTIONS_MS) return kept.connections
    // a room being unloaded is read once its last updates are stored
    const connections = Promise.all([...unloading]).then(() => store.load(room)).then((state) => {
      if (!state) return { connections: new Map<string, SharedConnection>(), visibility: null }
      const doc = new Y.Doc()
      try {
        Y.applyUpdate(doc, state)
        return accessOf(doc)
      } finally {
        doc.destroy()
      }
    })
    storedConnections.delete(room)
    storedConnections.set(room, { at: Date.now(), connections })
    if (storedConnections.size > STORED_CONNECTIONS_ROOMS) storedConnections.delete(storedConnections.keys().next().value!)
    connections.catch(() => storedConnections.delete(room))
    return connections
  }

  /**
   * Tokens the server issued first; otherwise a connection the memory's owner shared in the
   * memory itself; otherwise an organization member's credential, for a memory visible to it.
   */
  const authorize: Authorize = async (token, room) => {
    const first = await serverAuthorize(token, room)
    if (first.ok || first.code !== CLOSE.unauthorized || !token || options.authorize !== undefined) return first
    const held = await roomAccess(room)
    return sharedConnectionOf(token, room, held.connections) ?? memberAccess(token, room, held.visibility) ?? first
  }

  /** A member reads a memory of its organization with the `read` tier; a removed member, or a memory not visible to it, is refused. */
  function memberAccess(token: string, room: string, visibility: SharedVisibility | null): AuthResult | null {
    if (!orgs) return null
    let found = orgs.verify(token)
    if (!found) {
      orgs.reloadIfChanged()
      found = orgs.verify(token)
    }
    if (!found) return null
    const { org, member } = found
    if (member.removedAt !== null) return { ok: false, code: CLOSE.memberRemoved, reason: 'this member was removed from the organization' }
    // a private memory and one that does not exist get the same answer
    if (!visibleTo(visibility, org.id)) return { ok: false, code: CLOSE.forbidden, reason: 'this memory is not visible to your organization' }
    orgs.reloadIfChanged()
    if (!orgs.accepts(org.id, room)) return { ok: false, code: CLOSE.forbidden, reason: 'this memory was not accepted into your organization\'s listing; an administrator of the server accepts it' }
    const connection: ConnectionRecord = { id: member.id, memoryId: room, agent: member.name, tier: 'read', tokenHash: member.credentialHash, createdAt: member.addedAt, revokedAt: null }
    return { ok: true, connection, member: { orgId: org.id } }
  }

  /** Why a member's socket may no longer read the room, or null while it may. */
  function memberCut(room: string, orgId: string, memberId: string): { code: number; reason: string } | null {
    if (!orgs) return null
    if (!orgs.isActive(orgId, memberId)) return { code: CLOSE.memberRemoved, reason: 'this member was removed from the organization' }
    if (!orgs.accepts(orgId, room)) return { code: CLOSE.notVisible, reason: 'this memory was taken out of your organization\'s listing' }
    const doc = docs.get(docName(room))
    if (doc && !visibleTo(readVisibility(doc), orgId)) return { code: CLOSE.notVisible, reason: 'this memory is no longer visible to your organization' }
    return null
  }

  function onVisibility(room: string, v: SharedVisibility | null): void {
    for (const { ws, orgId } of memberSockets.get(room) ?? []) {
      if (visibleTo(v, orgId)) continue
      log('info', 'member_access_ended', { room, org: orgId, visibility: v?.visibility ?? 'private' })
      ws.close(CLOSE.notVisible, 'this memory is no longer visible to your organization')
    }
  }

  /** Whether a connection the memory holds was revoked there (checked before each of its updates). */
  const revokedInRoom = (room: string, connectionId: string): boolean => {
    const doc = docs.get(docName(room))
    if (!doc) return false
    const r = checkSharedConnection(connectionId, sharedConnectionsMap(doc).get(connectionId))
    return r.ok && r.value.revokedAt !== null
  }

  /** Makes sure the room's stored state is ready for bindState, which must apply it synchronously. */
  async function ensureLoaded(room: string): Promise<void> {
    while (!docs.has(docName(room)) && !preloaded.has(room)) {
      let p = loading.get(room)
      if (!p) {
        // Owners after the state: every client id in the state then has its owner (an owner is
        // recorded before the update that starts its client is stored).
        p = store.load(room).then(async (state) => {
          await owners.load(room)
          preloaded.set(room, state)
        }).finally(() => loading.delete(room))
        loading.set(room, p)
      }
      await p
    }
  }

  /**
   * Makes a client's accepted update durable; the gate hands it to the room (and so to every
   * peer and every sync reply) only after this resolves. One path for every store: Redis
   * acknowledges an XADD once its AOF is fsynced, the file store once its group commit is.
   */
  const persistUpdate = (room: string, update: Uint8Array): Promise<void> => {
    if (store.persist) return store.persist(room, update)
    store.append(room, update)
    return store.flush(room)
  }

  const closeSocketsOf = (connectionId: string, code: number, reason: string) => {
    for (const ws of sockets.get(connectionId) ?? []) ws.close(code, reason)
  }
  function onRevoked(c: ConnectionRecord, socketsKey = c.id) {
    log('info', 'connection_revoked', { connection: c.id, agent: c.agent, room: c.memoryId })
    closeSocketsOf(socketsKey, CLOSE.revoked, 'this connection token was revoked')
  }
  registry.onRevoked((c) => onRevoked(c))
  orgs?.onUnlisted((orgId, room) => {
    for (const { ws, orgId: of } of memberSockets.get(room) ?? []) {
      if (of === orgId) ws.close(CLOSE.notVisible, 'this memory was taken out of your organization\'s listing')
    }
  })
  orgs?.onMemberRemoved((org, member) => {
    log('info', 'member_removed', { org: org.id, member: member.id, name: member.name })
    closeSocketsOf(memberKey(member.id), CLOSE.memberRemoved, 'this member was removed from the organization')
  })
  access?.onRevoked((c) => onRevoked(c))

  async function onConnection(ws: WebSocket, req: IncomingMessage): Promise<void> {
    ws.on('error', (err) => log('warn', 'socket_error', { error: err.message }))
    const url = new URL(req.url ?? '/', 'http://localhost')
    let room = ''
    try {
      room = decodeURIComponent(url.pathname.slice(1))
    } catch {
      // a bad percent-encoding is the client's mistake, not a transient failure
    }
    if (!ROOM_NAME.test(room)) {
      ws.close(CLOSE.badRequest, 'the path must be /<memory id>')
      return
    }
    // Messages that arrive while an asynchronous check runs are kept and replayed to the gate.
    const early: Array<[unknown, boolean]> = []
    const keep = (data: unknown, isBinary: boolean) => early.push([data, isBinary])
    ws.on('message', keep)
    const auth = await authorize(url.searchParams.get('token'), room)
    ws.off('message', keep)
    if (ws.readyState !== ws.OPEN) return
    if (!auth.ok) {
      log('warn', 'connection_refused', { room, code: auth.code, reason: auth.reason })
      ws.close(auth.code, auth.reason)
      return
    }
    const { connection } = auth
    const shared = auth.shared === true
    const member = auth.member
    // A memory's own connection ids are its owner's to choose: keyed by room, so one memory's cannot name another's sockets.
    const key = member ? memberKey(connection.id) : shared ? sharedKey(room, connection.id) : connection.id
    let set = sockets.get(key)
    // A connection (an organization member: in one room) holds a bounded number of sockets: each
    // may ask for the whole room and stop reading, and what is queued for it is the server's memory.
    const inThisRoom = [...(set ?? [])].filter((other) => roomOf.get(other) === room).length
    if (inThisRoom >= budget.socketsPerConnection) {
      log('warn', 'too_many_sockets', { room, connection: connection.id, agent: connection.agent, sockets: inThisRoom })
      ws.close(CLOSE.tooManySockets, `this connection already has ${inThisRoom} sockets open to this memory; close one first`)
      return
    }
    if (!set) sockets.set(key, (set = new Set()))
    set.add(ws)
    roomOf.set(ws, room)
    ws.on('close', () => {
      set.delete(ws)
      if (set.size === 0) sockets.delete(key)
    })
    if (member) {
      const entry = { ws, orgId: member.orgId }
      let inRoom = memberSockets.get(room)
      if (!inRoom) memberSockets.set(room, (inRoom = new Set()))
      inRoom.add(entry)
      ws.on('close', () => {
        inRoom.delete(entry)
        if (inRoom.size === 0) memberSockets.delete(room)
      })
    }
    let roomDoc: WSSharedDoc | undefined
    const gate = new GatedSocket(ws, {
      connection,
      room,
      log,
      // The document the socket was set up with: after the last socket closes the room is
      // unloaded, and messages this one sent before closing still go through it (and to disk).
      roomDoc: () => roomDoc,
      // A revoke by the CLI is in the file before it returns; the watcher may not have fired yet.
      isRevoked: () => {
        if (member) {
          orgs?.reloadIfChanged()
          return memberCut(room, member.orgId, connection.id) !== null
        }
        if (shared) return revokedInRoom(room, connection.id)
        // Redis: revocations from every server arrive by pub/sub and are checked on connect.
        if (access) return access.isRevoked(connection.id)
        if (options.authorize !== undefined) return false
        try {
          registry.reloadIfChanged()
        } catch (err) {
          log('error', 'token_reload_failed', { error: (err as Error).message })
        }
        return registry.isRevoked(connection.id)
      },
      onRevokedUpdate: () => {
        const cut = member ? memberCut(room, member.orgId, connection.id) : null
        ws.close(cut?.code ?? CLOSE.revoked, cut?.reason ?? 'this connection token was revoked')
      },
      ownerOf: (client) => owners.ownerOf(room, client),
      bindClients: (clients) => owners.bind(room, clients, connection.id),
      persist: persistFirst ? (update) => persistUpdate(room, update) : null,
      syncReply: (stateVector) => (roomDoc ? thread.syncReply(room, roomDoc, stateVector) : Promise.resolve(null)),
      budget,
      window: windows.get(key) ?? windows.set(key, newBudgetWindow(budget)).get(key)!,
      onClose: (code, reason) => ws.close(code, reason),
    })
    gates.add(gate)
    ws.on('close', () => {
      void gate.idle().then(() => gates.delete(gate))
    })
    for (const [data, isBinary] of early) ws.emit('message', data, isBinary)
    try {
      await ensureLoaded(room)
    } catch (err) {
      log('error', 'room_load_failed', { room, error: (err as Error).message })
      ws.close(CLOSE.unavailable, 'the room could not be loaded; try again later')
      return
    }
    if (ws.readyState !== ws.OPEN) return
    setupWSConnection(gate as unknown as WebSocket, req, { docName: docName(room), gc: true })
    roomDoc = docs.get(docName(room))
    // authorized from stored state that a revoke (made on another server) may have overtaken
    if (shared && revokedInRoom(room, connection.id)) {
      ws.close(CLOSE.revoked, 'this connection token was revoked')
      return
    }
    const cut = member ? memberCut(room, member.orgId, connection.id) : null
    if (cut) {
      ws.close(cut.code, cut.reason)
      return
    }
    gate.start()
    log('info', 'connected', { room, connection: connection.id, agent: connection.agent, tier: connection.tier })
  }

  /**
   * GET /org/memories with `Authorization: Bearer <member credential>`: the organization, the
   * member, and the memories visible to the organization and accepted into its listing (ids and
   * names); private ones never.
   * Open to any origin: the credential travels in a header, never in a cookie.
   */
  function listForMember(req: IncomingMessage, res: ServerResponse): void {
    const headers = { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization', 'access-control-allow-methods': 'GET, OPTIONS', 'cache-control': 'no-store' }
    const reply = (status: number, body: unknown) => void res.writeHead(status, headers).end(JSON.stringify(body))
    if (req.method === 'OPTIONS') return void res.writeHead(204, headers).end()
    if (req.method !== 'GET') return reply(405, { code: 'invalid_request', message: 'use GET' })
    if (!orgs || !orgMemories) return reply(404, { code: 'not_found', message: 'this server keeps no organizations' })
    const credential = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    let found = credential ? orgs.verify(credential) : null
    if (credential && !found) {
      orgs.reloadIfChanged()
      found = orgs.verify(credential)
    }
    if (!found) return reply(401, { code: 'unauthorized', message: 'send a member credential as the Bearer token' })
    if (found.member.removedAt !== null) return reply(403, { code: 'member_removed', message: 'this member was removed from the organization' })
    const { org, member } = found
    orgs.reloadIfChanged()
    const memories = orgMemories.of(org.id).filter(({ id }) => {
      // only what the organization accepted: naming it in a visibility is open to any owner
      if (!orgs.accepts(org.id, id)) return false
      // a loaded room answers from its document, which is never behind the index
      const live = docs.get(docName(id))
      return !live || visibleTo(readVisibility(live), org.id)
    })
    reply(200, { org: { id: org.id, name: org.name }, member: { id: member.id, kind: member.kind, name: member.name }, memories })
  }

  const tokenAdmin: TokenAdmin = access ?? {
    add: async (input) => registry.add(input),
    revoke: async (connectionId) => registry.revoke(connectionId),
    list: async (memoryId) => registry.list(memoryId),
  }
  const claim = options.claimKey === undefined || options.authorize !== undefined ? undefined : claimHandler({
    claimKey: options.claimKey,
    tokens: tokenAdmin,
    roomHasConnections: async (memoryId) => (await roomAccess(memoryId)).connections.size > 0,
    log,
  })

  const http = createServer((req, res) => {
    if (req.url === '/org/memories' || req.url?.startsWith('/org/memories?')) return listForMember(req, res)
    if (claim && req.url === '/claim') return claim(req, res)
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
      return
    }
    res.writeHead(426, { 'content-type': 'text/plain' }).end('Cairn sync server: connect with a WebSocket to /<memory id>?token=...\n')
  })
  // a little over the largest update, for the message's own header
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes ?? Math.max(budget.update.maxBytes, budget.update.maxStructBytes, budget.update.maxFileBytes) + 1024 })
  http.on('upgrade', (req, socket, head) => {
    // clients reconnect as soon as a closing server says goodbye: those sockets get no room
    if (closing) return void socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => {
      onConnection(ws, req).catch((err: unknown) => {
        log('error', 'connection_failed', { error: (err as Error).message })
        ws.close(CLOSE.unavailable, 'internal error')
      })
    })
  })

  let watcher: FSWatcher | undefined
  let reloadTimer: NodeJS.Timeout | undefined
  if (options.authorize === undefined && !access) {
    try {
      watcher = watch(options.dataDir, (_event, filename) => {
        if (filename === ORGS_FILE) {
          try {
            orgs?.reload()
          } catch (err) {
            log('error', 'org_reload_failed', { error: (err as Error).message })
          }
          return
        }
        if (filename !== TOKENS_FILE) return
        clearTimeout(reloadTimer)
        reloadTimer = setTimeout(() => {
          try {
            registry.reload()
          } catch (err) {
            log('error', 'token_reload_failed', { error: (err as Error).message })
          }
        }, 50)
      })
    } catch (err) {
      log('warn', 'token_watch_unavailable', { error: (err as Error).message })
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject)
      resolve()
    })
  }).catch(async (err: unknown) => {
    // A port in use: release the Redis connections too, or the process would not exit.
    watcher?.close()
    await store.close().catch(() => {})
    await thread.terminate()
    await access?.close().catch(() => {})
    await redis?.close().catch(() => {})
    instances.delete(id)
    throw err
  })
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0)
  log('info', 'listening', { host, port, dataDir: options.dataDir })

  const fileOrgs = () => {
    if (!orgs || !orgMemories) throw new MemoryError('invalid_request', 'organizations are kept in the data directory of a server without redis or a custom authorize')
    return { orgs, orgMemories }
  }

  const fileTokens = () => {
    if (access) throw new MemoryError('invalid_request', 'this server keeps its tokens in Redis: use server.access (or `token ... --redis <url>`)')
    return registry
  }

  let closing: Promise<void> | undefined
  async function close(): Promise<void> {
    watcher?.close()
    clearTimeout(reloadTimer)
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
    await Promise.all([...unloading])
    for (const unsubscribe of unsubscribes.values()) unsubscribe()
    unsubscribes.clear()
    for (const [name, doc] of docs) {
      if (name.startsWith(`${id}/`)) {
        docs.delete(name)
        doc.destroy()
      }
    }
    await store.close()
    await thread.terminate()
    await access?.close()
    await redis?.close()
    instances.delete(id)
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
    async roomState(room) {
      const live = docs.get(docName(room))
      if (live) return Y.encodeStateAsUpdate(live)
      await Promise.all([...unloading])
      return store.load(room)
    },
    close: () => (closing ??= close()),
  }
}
