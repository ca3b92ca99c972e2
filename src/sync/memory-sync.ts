// One memory following its user across devices: its sync document, loaded from and saved to
// the memory's own database, bound to the engine, and connected to a sync server when one
// is given. Without a server the document still records every write, so the memory can
// start syncing later without losing what it did offline.
import type * as Y from 'yjs'
import { connectMemoryDoc, type SyncClient } from './client'
import { joinTabChannel, type TabChannel } from './tab-channel'
import { bindMemoryDoc, ENGINE_ORIGIN, type DocBinding } from './doc-bridge'
import { lastLoadedRow, loadMemoryDoc, persistMemoryDoc, type DocPersistence } from './doc-store'
import type { FirstSyncProgress } from './first-sync'
import type { SyncPort } from './port'

/** Messages from the server handled ahead of what the engine has applied (see `paceReceiving`). */
const RECEIVING_AHEAD = 4

function sameProgress(a: FirstSyncProgress | null, b: FirstSyncProgress | null): boolean {
  return a === b || (a !== null && b !== null && a.received === b.received && a.of === b.of)
}

export interface SyncOptions {
  /** e.g. `ws://127.0.0.1:1234`; omit to keep the document local until later. */
  serverUrl?: string
  /** The connection token the sync server issued for this memory. */
  token?: string
  /** Node before v22 has no global WebSocket: pass the `ws` package's. */
  WebSocketPolyfill?: unknown
  /** Also sync with other tabs (workers) of this browser profile through BroadcastChannel; default true. */
  crossTab?: boolean
}

/** What a person is shown about sync. */
export interface SyncView {
  state: SyncClient['status']['state'] | 'local'
  serverUrl: string | null
  lastSyncedAt: string | null
  /** Local changes made while not connected; they are sent on reconnect. */
  pendingChanges: number
  refusals: SyncClient['status']['refusals']
  diverged: boolean
  closed: SyncClient['status']['closed']
  /** Values other devices wrote that were not valid and were left out (the memory is unharmed). */
  invalidFromPeers: number
  /**
   * A first sync arriving in pieces: how many are applied to this memory, of how many; null
   * otherwise. It stays until the engine has applied every piece, after the connection is synced.
   */
  firstSync: SyncClient['status']['firstSync']
}

export class MemorySync {
  private pending = 0
  private invalidCount = 0
  private serverUrl: string | null = null
  /** What the current connection was made with, to tell a repeated request from a new one. */
  private connectedWith: { token: string; WebSocketPolyfill: unknown } | null = null
  private readonly listeners = new Set<(view: SyncView) => void>()
  private stopClientStatus: (() => void) | undefined
  /** The pieces of a first sync the engine has applied (see `SyncView.firstSync`). */
  private applied: FirstSyncProgress | null = null
  /** The progress last reported by the connection, shown once applied. */
  private requested: FirstSyncProgress | null = null
  private stopped = false

  private constructor(
    readonly doc: Y.Doc,
    private readonly binding: DocBinding,
    private readonly persistence: DocPersistence,
    private currentClient: SyncClient | null,
    private readonly tabs: TabChannel | null,
    private readonly memoryId: string,
    private readonly engine: SyncPort,
  ) {
    doc.on('update', this.countPending)
  }

  private readonly countPending = (_u: Uint8Array, origin: unknown): void => {
    if (origin === ENGINE_ORIGIN && this.currentClient?.status.state !== 'online') {
      this.pending++
      this.notify()
    }
  }

  get client(): SyncClient | null {
    return this.currentClient
  }

  get view(): SyncView {
    const s = this.currentClient?.status
    return {
      state: s?.state ?? 'local',
      serverUrl: this.serverUrl,
      lastSyncedAt: s?.lastSyncedAt ?? null,
      pendingChanges: this.pending,
      refusals: s?.refusals ?? [],
      diverged: s?.diverged ?? false,
      closed: s?.closed ?? null,
      invalidFromPeers: this.invalidCount,
      firstSync: this.applied,
    }
  }

  /** Calls `listener` on every change of the view; returns the unsubscribe. */
  onView(listener: (view: SyncView) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Connects to a sync server, replacing any earlier server connection. Asked again for the
   * server and token of a connection that is online or still connecting (each screen of a memory
   * asks as it opens), it keeps that connection: a new one would start a first sync in progress
   * over, losing the piece in flight and its turn in the server's queue.
   */
  connect(options: SyncOptions & { serverUrl: string; token: string }): SyncClient {
    const current = this.currentClient
    const asked = this.connectedWith
    if (current && asked && this.serverUrl === options.serverUrl && asked.token === options.token && asked.WebSocketPolyfill === options.WebSocketPolyfill && (current.status.state === 'online' || current.status.state === 'connecting')) return current
    this.stopClientStatus?.()
    this.currentClient?.destroy()
    this.serverUrl = options.serverUrl
    const client = connectMemoryDoc({
      serverUrl: options.serverUrl,
      memoryId: this.memoryId,
      token: options.token,
      doc: this.doc,
      ...(options.WebSocketPolyfill ? { WebSocketPolyfill: options.WebSocketPolyfill } : {}),
      // tabs already share the document through the tab channel
      crossTab: false,
      pace: this.paceReceiving(),
    })
    this.currentClient = client
    this.connectedWith = { token: options.token, WebSocketPolyfill: options.WebSocketPolyfill }
    this.stopClientStatus = client.on('status', (s) => {
      // going online sends the whole local state, so nothing is pending after it
      if (s.state === 'online') this.pending = 0
      this.notify()
      // a piece counts once the engine has applied it, not when the document has it: the engine
      // catches up later, and a recall until then answers from part of the memory and says so
      this.follow(client, s.firstSync)
    })
    this.follow(client, null)
    this.notify()
    return client
  }

  /**
   * Each message from the server waits until the engine has applied what arrived a few
   * messages before: the engine lags the document by a piece or two of a first sync, so a
   * recall soon answers from the first pieces, and the document never holds most of the
   * memory while the engine has applied little of it (the rest waits as the bytes that came).
   */
  private paceReceiving(): () => Promise<void> {
    // what was applied as each of the last few messages was handled: a piece comes with its progress message
    const before: Array<Promise<void>> = []
    return async () => {
      before.push(this.binding.applied())
      if (before.length > RECEIVING_AHEAD) await before.shift()
    }
  }

  /** Shows `progress` once the engine has applied what the document holds now. */
  private follow(client: SyncClient, progress: FirstSyncProgress | null): void {
    if (sameProgress(progress, this.requested)) return
    this.requested = progress
    // from the first piece on, a recall knows it answers from part of the memory, even before the engine has applied any
    if (progress && !this.applied) this.showApplied(client, { received: 0, of: progress.of })
    void this.binding.applied().then(() => this.showApplied(client, progress))
  }

  private showApplied(client: SyncClient, progress: FirstSyncProgress | null): void {
    if (this.stopped || client !== this.currentClient || sameProgress(progress, this.applied)) return
    this.applied = progress
    this.engine.receiving(progress)
    this.notify()
  }

  private countInvalid(n: number): void {
    if (!n) return
    this.invalidCount += n
    this.notify()
  }

  private notify(): void {
    const view = this.view
    for (const l of this.listeners) l(view)
  }

  /** @internal started by `Memory.sync` */
  static async start(engine: SyncPort, options: SyncOptions = {}): Promise<MemorySync> {
    const doc = await loadMemoryDoc(engine.db)
    let tabs: TabChannel | null = null
    const persistence = persistMemoryDoc(engine.db, doc, () => tabs?.announce())
    let sync: MemorySync | undefined
    const binding = await bindMemoryDoc(engine, doc, {
      saved: () => persistence.flush(),
      onInvalid: (entries) => sync?.countInvalid(entries.length),
    })
    tabs = options.crossTab === false ? null : joinTabChannel(engine.info.id, doc, engine.db, lastLoadedRow(doc))
    sync = new MemorySync(doc, binding, persistence, null, tabs, engine.info.id, engine)
    sync.countInvalid(binding.invalid.length)
    if (options.serverUrl) {
      if (!options.token) throw new TypeError('sync with a server needs the token it issued for this memory')
      sync.connect({ ...options, serverUrl: options.serverUrl, token: options.token })
    }
    return sync
  }

  /** Settles when every change seen so far is applied to the engine and saved locally. */
  async settled(): Promise<void> {
    await this.tabs?.settled()
    await this.binding.settled()
    await this.persistence.flush()
  }

  /** Remote changes the engine could not apply (storage failures). */
  get failures(): readonly Error[] {
    return this.binding.failures
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.stopClientStatus?.()
    this.applied = null
    this.engine.receiving(null)
    this.currentClient?.destroy()
    this.tabs?.stop()
    this.listeners.clear()
    this.doc.off('update', this.countPending)
    await this.settled().catch(() => undefined)
    this.binding.stop()
    this.persistence.stop()
  }
}
