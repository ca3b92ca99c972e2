// Connects one memory document to the sync server through y-websocket, with the connection
// token, and turns the provider's signals into one status the UI can show: connecting,
// online (synced), offline, or denied (the token was refused or revoked). Refusals of local
// changes are surfaced too: the device's document then holds changes others will not see.
import * as decoding from 'lib0/decoding'
import { WebsocketProvider } from 'y-websocket'
import * as syncProtocol from 'y-protocols/sync'
import type * as Y from 'yjs'
import { isFinalClose } from './close-codes'
import { MESSAGE_SYNC_PROGRESS, readProgress, syncMessage, type FirstSyncProgress } from './first-sync'
import { MESSAGE_REFUSAL, readRefusal, type Refusal } from './refusal'
import { nextTurn } from './turns'
import { MAX_UPDATE_BYTES, splitUpdate } from './update-split'

/** `online` means synced with the server; `offline` means not connected (retrying unless disconnected). */
export type SyncState = 'connecting' | 'online' | 'offline' | 'denied'

export interface SyncStatus {
  state: SyncState
  /** When this device last completed a sync handshake or received a change from the server. */
  lastSyncedAt: string | null
  /** Refusals since the last `acknowledgeRefusals()`, oldest first (at most 50 kept). */
  refusals: Refusal[]
  /**
   * True after a refusal: this document holds changes the server did not take. Later changes
   * from the same document build on them and are refused too, until the memory reloads from
   * the server's state.
   */
  diverged: boolean
  /** Why the server closed the connection for good, when state is `denied`. */
  closed: { code: number; reason: string } | null
  /**
   * While the server's answer to this device comes in pieces (a new device joining a large
   * memory): how many have been applied, of how many; null otherwise.
   */
  firstSync: FirstSyncProgress | null
}

export interface SyncClientOptions {
  /** e.g. `ws://127.0.0.1:1234` */
  serverUrl: string
  memoryId: string
  token: string
  doc: Y.Doc
  /** Node has no global WebSocket before v22: pass `WebSocket` from the `ws` package. */
  WebSocketPolyfill?: unknown
  /** Sync with other tabs of this browser through BroadcastChannel; default true. */
  crossTab?: boolean
  /** Connect at once; default true. */
  connect?: boolean
  /** Upper bound of the reconnect backoff, in milliseconds; default 2500. */
  maxBackoffMs?: number
  /**
   * Larger updates go to the server in pieces of at most this size; default the server's limit.
   * Other tabs (`crossTab`) get them whole: nothing bounds a tab's message.
   */
  maxUpdateBytes?: number
  /**
   * Awaited before each message from the server is handled. A memory that applies what arrives
   * more slowly than it arrives (a new device joining a large memory) has the rest wait as the
   * bytes that came, not yet in its document, so its document runs only a little ahead of what
   * it has applied. (The socket goes on reading: the waiting bytes are on this device.)
   */
  pace?: () => Promise<void>
}

type Listener<T> = (value: T) => void

export interface SyncClient {
  readonly status: SyncStatus
  readonly provider: WebsocketProvider
  on(event: 'status', listener: Listener<SyncStatus>): () => void
  on(event: 'refused', listener: Listener<Refusal>): () => void
  /** Resolves once online; rejects when the server denies the connection or after `timeoutMs`. */
  whenSynced(timeoutMs?: number): Promise<void>
  /** Clears the refusal list and the diverged flag, once the user has been told and the memory reloaded. */
  acknowledgeRefusals(): void
  connect(): void
  disconnect(): void
  destroy(): void
}

const MAX_REFUSALS_KEPT = 50

export function connectMemoryDoc(options: SyncClientOptions): SyncClient {
  const Socket = (options.WebSocketPolyfill ?? globalThis.WebSocket) as SocketClass | undefined
  if (!Socket) throw new Error('this runtime has no WebSocket: pass one as WebSocketPolyfill (the `ws` package in Node before v22)')
  const provider = new WebsocketProvider(options.serverUrl, options.memoryId, options.doc, {
    params: { token: options.token },
    connect: false,
    disableBc: options.crossTab === false,
    maxBackoffTime: options.maxBackoffMs ?? 2500,
    WebSocketPolyfill: socketReceivingInTurns(socketSendingInPieces(Socket, options.maxUpdateBytes ?? MAX_UPDATE_BYTES), options.pace) as never,
  })
  let status: SyncStatus = { state: 'offline', lastSyncedAt: null, refusals: [], diverged: false, closed: null, firstSync: null }
  const statusListeners = new Set<Listener<SyncStatus>>()
  const refusalListeners = new Set<Listener<Refusal>>()

  const set = (patch: Partial<SyncStatus>) => {
    const next = { ...status, ...patch }
    if (JSON.stringify(next) === JSON.stringify(status)) return
    status = next
    for (const l of statusListeners) l(status)
  }

  provider.messageHandlers[MESSAGE_REFUSAL] = (_encoder, decoder) => {
    const refusal = readRefusal(decoder)
    set({ refusals: [...status.refusals, refusal].slice(-MAX_REFUSALS_KEPT), diverged: true })
    for (const l of refusalListeners) l(refusal)
  }

  // the provider has applied each piece before this message about it arrives
  provider.messageHandlers[MESSAGE_SYNC_PROGRESS] = (_encoder, decoder) => {
    const progress = readProgress(decoder)
    if (progress && status.state !== 'online') set({ firstSync: progress })
  }

  // `offline` covers both a server that cannot be reached (the provider keeps retrying) and a
  // deliberate disconnect; the document keeps working locally either way.
  provider.on('status', ({ status: s }) => {
    if (s === 'connecting') set({ state: 'connecting' })
    else if (s === 'disconnected' && status.state !== 'denied') set({ state: 'offline', firstSync: null })
  })
  provider.on('sync', (synced) => {
    if (synced) set({ state: 'online', lastSyncedAt: new Date().toISOString(), closed: null, firstSync: null })
  })
  provider.on('connection-close', (event) => {
    if (event && isFinalClose(event.code)) set({ state: 'denied', closed: { code: event.code, reason: event.reason } })
    else if (status.state !== 'denied') set({ state: 'offline' })
  })
  const onUpdate = (_update: Uint8Array, origin: unknown) => {
    if (origin === provider && status.state === 'online') set({ lastSyncedAt: new Date().toISOString() })
  }
  options.doc.on('update', onUpdate)

  const client: SyncClient = {
    get status() {
      return status
    },
    provider,
    on(event: 'status' | 'refused', listener: Listener<never>) {
      const set = (event === 'status' ? statusListeners : refusalListeners) as Set<Listener<never>>
      set.add(listener)
      return () => set.delete(listener)
    },
    whenSynced(timeoutMs = 10_000) {
      if (status.state === 'online') return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          stop()
          reject(new Error(`not synced with ${options.serverUrl} within ${timeoutMs} ms`))
        }, timeoutMs)
        const stop = client.on('status', (s) => {
          if (s.state === 'online') {
            clearTimeout(timer)
            stop()
            resolve()
          } else if (s.state === 'denied') {
            clearTimeout(timer)
            stop()
            reject(new Error(`the sync server refused the connection (${s.closed?.code}): ${s.closed?.reason}`))
          }
        })
      })
    },
    acknowledgeRefusals() {
      set({ refusals: [], diverged: false })
    },
    connect() {
      set({ state: 'connecting', closed: null })
      provider.connect()
    },
    disconnect() {
      provider.disconnect()
      set({ state: 'offline' })
    },
    destroy() {
      options.doc.off('update', onUpdate)
      provider.destroy()
      // The provider made this awareness; its timer would otherwise outlive the client.
      provider.awareness.destroy()
      set({ state: 'offline' })
      statusListeners.clear()
      refusalListeners.clear()
    },
  }
  if (options.connect !== false) client.connect()
  return client
}

const MESSAGE_SYNC = 0

/** What the provider needs of a WebSocket class: what `WebSocketPolyfill` promises to take. */
// a mixin's base takes any arguments: the provider passes the url and protocols through
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type SocketClass = new (...args: any[]) => { send(data: Uint8Array | ArrayBufferLike): void }

/**
 * The server takes updates up to a size (it judges each in one turn), so this document's
 * updates go to it in pieces: its answer to the server's state vector (a first upload of a big
 * memory is one such answer) and its own large transactions (an import). The provider takes
 * the WebSocket class it uses as an option (`WebSocketPolyfill`); this one cuts each outgoing
 * sync message that carries an update larger than `maxBytes` into messages of its pieces, in
 * order, and passes everything else through unchanged.
 */
export function socketSendingInPieces<C extends SocketClass>(Base: C, maxBytes: number): C {
  return class extends Base {
    override send(data: Uint8Array | ArrayBufferLike): void {
      const bytes = data instanceof Uint8Array ? data : new Uint8Array(data as ArrayBuffer)
      const split = updateOf(bytes)
      if (!split || split.update.byteLength <= maxBytes) return super.send(data)
      for (const piece of splitUpdate(split.update, maxBytes)) super.send(syncMessage(split.step, piece))
    }
  }
}

type MessageHandler = ((event: unknown) => void) | null

/**
 * Hands the provider each incoming message in a task of its own, once `pace` allows. A browser delivers each
 * WebSocket message as a task already, but Node's `ws` delivers every message it has buffered
 * in one go: a device busy applying one piece of a first sync found the next ten waiting and
 * applied them all before anything else ran (a recall waited seconds). Messages keep their
 * order; those still waiting when the provider lets go of the socket (it closed) are dropped,
 * as the provider drops any message of a socket it no longer uses, and the server sends what
 * they carried again on the next connection.
 */
export function socketReceivingInTurns<C extends SocketClass>(Base: C, pace: () => Promise<void> = async () => undefined): C {
  return class extends Base {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    constructor(...args: any[]) {
      super(...args)
      // kept in this closure, not as members, so no name of the socket class is shadowed
      let handler: MessageHandler = null
      let queueing: MessageHandler = null
      let waiting: unknown[] = []
      const deliver = (): void => {
        const queue = waiting
        const event = queue[0]
        // dropped meanwhile: the provider let this socket go
        if (event === undefined || queue !== waiting) return
        try {
          handler?.(event)
        } finally {
          queue.shift()
          if (queue.length) next()
        }
      }
      const next = (): void => {
        void nextTurn()
          .then(pace)
          .catch(() => undefined)
          .then(deliver)
      }
      const receive = (event: unknown): void => {
        waiting.push(event)
        if (waiting.length === 1) next()
      }
      // a socket class keeps `onmessage` as an accessor (WebSocket, ws) or as a field (a test's
      // fake): either way the provider's handler is swapped for one that queues, on this socket
      const field = Object.getOwnPropertyDescriptor(this, 'onmessage')
      Object.defineProperty(this, 'onmessage', {
        configurable: true,
        enumerable: true,
        get: () => queueing,
        set: (next: MessageHandler) => {
          handler = next
          if (!next) waiting = []
          queueing = next && receive
          if (!field) Reflect.set(Base.prototype, 'onmessage', queueing, this)
        },
      })
    }
  }
}

/** The update a sync message carries (step 2 or an update), or undefined for any other message. */
function updateOf(message: Uint8Array): { step: number; update: Uint8Array } | undefined {
  try {
    const decoder = decoding.createDecoder(message)
    if (decoding.readVarUint(decoder) !== MESSAGE_SYNC) return undefined
    const step = decoding.readVarUint(decoder)
    if (step !== syncProtocol.messageYjsSyncStep2 && step !== syncProtocol.messageYjsUpdate) return undefined
    return { step, update: decoding.readVarUint8Array(decoder) }
  } catch {
    return undefined
  }
}
