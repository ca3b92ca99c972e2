// The rooms one sync server hosts: a room's stored state is loaded before its first socket
// joins, each loaded document is tied to the room store, the room thread and the watchers of
// its connections and visibility, and a room is stored and compacted when its last socket leaves.
import { docs, setPersistence, type WSSharedDoc } from '@y/websocket-server/utils'
import * as Y from 'yjs'
import type { ConnectionRecord } from '../core/types'
import { checkSharedConnection, readSharedConnections, sharedConnectionsMap, type SharedConnection } from '../sync/shared-connections'
import { readVisibility, visibilityMap, type SharedVisibility } from '../sync/visibility'
import type { OwnerTable } from './client-owners'
import { GatedSocket } from './gated-socket'
import type { SyncLog } from './log'
import type { RoomStore } from './room-store'
import type { RoomThread } from './room-thread'
import { noteLoadedState } from './update-policy'

// @y/websocket-server keeps rooms and the persistence hook in module state. Every server in
// this process names its rooms `<instance>/<room>`, and one hook dispatches to the owner.
const instances = new Map<string, Rooms>()
let nextInstance = 0
const STORE_ORIGIN = Symbol('room-store')

function splitDocName(docName: string): { rooms: Rooms | undefined; room: string } {
  const slash = docName.indexOf('/')
  return { rooms: instances.get(docName.slice(0, slash)), room: docName.slice(slash + 1) }
}

setPersistence({
  provider: null,
  bindState: (docName, doc) => {
    const { rooms, room } = splitDocName(docName)
    rooms?.bind(room, doc)
  },
  writeState: async (docName, doc) => {
    const { rooms, room } = splitDocName(docName)
    await rooms?.unbind(room, doc)
  },
})

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

/** The memory's own connections and its visibility, as the room holds them. */
export interface RoomAccess {
  connections: Map<string, SharedConnection>
  visibility: SharedVisibility | null
}
const accessOf = (doc: Y.Doc): RoomAccess => ({ connections: readSharedConnections(doc), visibility: readVisibility(doc) })

/** What a room's document tells the rest of the server, each after the update is relayed. */
export interface RoomWatchers {
  /** A connection the memory holds was revoked in its document; `key` is its id there. */
  revoked(connection: ConnectionRecord, key: string): void
  /** The room's visibility when it loads (no `change`) and after each change (`by`: the agent whose socket made it). */
  visibility(room: string, visibility: SharedVisibility | null, change?: { by: string | undefined }): void
}

export interface RoomsOptions {
  store: RoomStore
  thread: RoomThread
  owners: OwnerTable
  log: SyncLog
  /** Sockets' updates are stored before they reach the room (the gate does it), not after. */
  persistFirst: boolean
  watchers: RoomWatchers
}

// A room that is not loaded is read from storage to authorize a memory's own connection;
// what was read is kept briefly (and per room only), so unknown tokens sent again and again
// cost one read of the room, not one each. A room that loads drops its entry.
const STORED_ACCESS_MS = 2_000
const STORED_ACCESS_ROOMS = 256

export class Rooms {
  private readonly id = `s${nextInstance++}`
  private readonly preloaded = new Map<string, Uint8Array | null>()
  private readonly loading = new Map<string, Promise<void>>()
  private readonly unloading = new Set<Promise<void>>()
  private readonly unsubscribes = new Map<string, () => void>()
  private readonly storedAccess = new Map<string, { at: number; access: Promise<RoomAccess> }>()

  constructor(private readonly o: RoomsOptions) {
    instances.set(this.id, this)
  }

  /** The room's name in @y/websocket-server's module state. */
  docName(room: string): string {
    return `${this.id}/${room}`
  }

  /** The room's document while it is loaded. */
  live(room: string): WSSharedDoc | undefined {
    return docs.get(this.docName(room))
  }

  /** Ties a document the room code just made to the room's state, store and watchers. */
  bind(room: string, doc: WSSharedDoc): void {
    const { store, thread, owners, log, persistFirst, watchers } = this.o
    const state = this.preloaded.get(room)
    this.preloaded.delete(room)
    if (state) applyLoadedState(doc, state)
    // the room's first judged update builds its copy from the same bytes, so the thread gets its own
    if (state) noteLoadedState(doc, state)
    thread.open(room, doc, state ? state.slice() : null)
    doc.on('update', (update: Uint8Array) => thread.update(room, doc, update))
    this.storedAccess.delete(room)
    // A revoke written into the memory's own connections (by its owner, on any server) closes
    // that connection's sockets here. After the update is relayed, so the revoked replica
    // still hears of its revoke before its socket closes.
    sharedConnectionsMap(doc).observe((event) => {
      for (const key of event.keysChanged) {
        const r = checkSharedConnection(key, sharedConnectionsMap(doc).get(key))
        if (r.ok && r.value.revokedAt !== null) setImmediate(() => watchers.revoked({ ...r.value, memoryId: room }, key))
      }
    })
    // The room's visibility: noted for listing, and a memory made private (or given to another
    // organization) closes the sockets of members who may no longer read it, after the update is relayed.
    watchers.visibility(room, readVisibility(doc))
    visibilityMap(doc).observe((event) => {
      // who made the change, when a socket did: the listing says who published the memory
      const origin = event.transaction.origin
      const by = origin instanceof GatedSocket ? origin.connection.agent : undefined
      // read when the relay is done: the last of several changes in one turn wins
      setImmediate(() => watchers.visibility(room, readVisibility(doc), { by }))
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
        if (this.live(room) === doc) Y.applyUpdate(doc, update, STORE_ORIGIN)
      })
    })
    if (unsubscribe) this.unsubscribes.set(room, unsubscribe)
  }

  /** The room's last socket left: its updates are stored and its log compacted. */
  unbind(room: string, doc: WSSharedDoc): Promise<void> {
    const { store, thread, log } = this.o
    thread.close(room, doc)
    this.storedAccess.delete(room)
    this.unsubscribes.get(room)?.()
    this.unsubscribes.delete(room)
    const done = store.flush(room).then(() => store.compact(room)).catch((err: unknown) => {
      log('error', 'room_unload_failed', { room, error: (err as Error).message })
    })
    this.unloading.add(done)
    return done.finally(() => this.unloading.delete(done))
  }

  /** Makes sure the room's stored state is ready for bind, which must apply it synchronously. */
  async ensureLoaded(room: string): Promise<void> {
    while (!this.live(room) && !this.preloaded.has(room)) {
      let p = this.loading.get(room)
      if (!p) {
        // Owners after the state: every client id in the state then has its owner (an owner is
        // recorded before the update that starts its client is stored).
        p = this.o.store.load(room).then(async (state) => {
          await this.o.owners.load(room)
          this.preloaded.set(room, state)
        }).finally(() => this.loading.delete(room))
        this.loading.set(room, p)
      }
      await p
    }
  }

  /**
   * Makes a client's accepted update durable; the gate hands it to the room (and so to every
   * peer and every sync reply) only after this resolves. One path for every store: Redis
   * acknowledges an XADD once its AOF is fsynced, the file store once its group commit is.
   */
  persist(room: string, update: Uint8Array): Promise<void> {
    const { store } = this.o
    if (store.persist) return store.persist(room, update)
    store.append(room, update)
    return store.flush(room)
  }

  /** The memory's connections and visibility as the room holds them: the live document, or what storage holds. */
  access(room: string): Promise<RoomAccess> {
    const live = this.live(room)
    if (live) return Promise.resolve(accessOf(live))
    const kept = this.storedAccess.get(room)
    if (kept && Date.now() - kept.at < STORED_ACCESS_MS) return kept.access
    // a room being unloaded is read once its last updates are stored
    const access = this.settled().then(() => this.o.store.load(room)).then((state) => {
      if (!state) return { connections: new Map<string, SharedConnection>(), visibility: null }
      const doc = new Y.Doc()
      try {
        Y.applyUpdate(doc, state)
        return accessOf(doc)
      } finally {
        doc.destroy()
      }
    })
    this.storedAccess.delete(room)
    this.storedAccess.set(room, { at: Date.now(), access })
    if (this.storedAccess.size > STORED_ACCESS_ROOMS) this.storedAccess.delete(this.storedAccess.keys().next().value!)
    access.catch(() => this.storedAccess.delete(room))
    return access
  }

  /** The room's current state as one update (a loaded room) or what storage holds, or null. */
  async state(room: string): Promise<Uint8Array | null> {
    const live = this.live(room)
    if (live) return Y.encodeStateAsUpdate(live)
    await this.settled()
    return this.o.store.load(room)
  }

  /** Resolves once every room being unloaded is stored. */
  async settled(): Promise<void> {
    await Promise.all([...this.unloading])
  }

  /** A closing server: rooms still loaded are dropped (their updates are stored already). */
  async unloadAll(): Promise<void> {
    await this.settled()
    for (const unsubscribe of this.unsubscribes.values()) unsubscribe()
    this.unsubscribes.clear()
    for (const [name, doc] of docs) {
      if (name.startsWith(`${this.id}/`)) {
        docs.delete(name)
        doc.destroy()
      }
    }
  }

  /** Stops receiving the room code's persistence calls (the last step of closing). */
  release(): void {
    instances.delete(this.id)
  }
}
