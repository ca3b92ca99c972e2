// One memory following its user across devices: its sync document, loaded from and saved to
// the memory's own database, bound to the engine, and connected to a sync server when one
// is given. Without a server the document still records every write, so the memory can
// start syncing later without losing what it did offline.
import type * as Y from 'yjs'
import { connectMemoryDoc, type SyncClient } from '../sync/client'
import { joinTabChannel, type TabChannel } from '../sync/tab-channel'
import { bindMemoryDoc, type DocBinding } from './doc-bridge'
import { loadMemoryDoc, persistMemoryDoc, type DocPersistence } from './doc-store'
import type { MemoryEngine } from './memory'

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

export class MemorySync {
  private constructor(
    readonly doc: Y.Doc,
    private readonly binding: DocBinding,
    private readonly persistence: DocPersistence,
    readonly client: SyncClient | null,
    private readonly tabs: TabChannel | null,
  ) {}

  static async start(engine: MemoryEngine, options: SyncOptions = {}): Promise<MemorySync> {
    const doc = await loadMemoryDoc(engine.db)
    const persistence = persistMemoryDoc(engine.db, doc)
    const binding = await bindMemoryDoc(engine, doc)
    const tabs = options.crossTab === false ? null : joinTabChannel(engine.info.id, doc)
    let client: SyncClient | null = null
    if (options.serverUrl) {
      if (!options.token) throw new TypeError('sync with a server needs the token it issued for this memory')
      client = connectMemoryDoc({
        serverUrl: options.serverUrl,
        memoryId: engine.info.id,
        token: options.token,
        doc,
        ...(options.WebSocketPolyfill ? { WebSocketPolyfill: options.WebSocketPolyfill } : {}),
        // tabs already share the document through the tab channel
        crossTab: false,
      })
    }
    return new MemorySync(doc, binding, persistence, client, tabs)
  }

  /** Settles when every change seen so far is applied to the engine and saved locally. */
  async settled(): Promise<void> {
    await this.binding.settled()
    await this.persistence.flush()
  }

  /** Remote changes the engine could not apply (storage failures). */
  get failures(): readonly Error[] {
    return this.binding.failures
  }

  async stop(): Promise<void> {
    this.client?.destroy()
    this.tabs?.stop()
    await this.settled().catch(() => undefined)
    this.binding.stop()
    this.persistence.stop()
  }
}
