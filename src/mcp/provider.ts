// Where the MCP server gets its memory. The seam lets a synced replica replace the local one
// without touching the server.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createHash, timingSafeEqual } from 'node:crypto'
import { MemoryError } from '../core/errors'
import type { RetrievalConfig } from '../core/types'
import type { Connection } from '../engine/connection'
import { Memory } from '../engine/memory-handle'
import { joinOrganizationMemory } from '../engine/organizations'
import { CLOSE } from '../sync/close-codes'
import type { Embedder } from '../search/embedder'
import type { DurableStoreOptions } from '../node-store/durable-indexeddb'
import { openNodeMemory } from '../node-store/node-memory'

export interface MemoryProvider {
  memory(): Promise<Memory>
  close(): Promise<void>
  /**
   * The connection a Bearer token opens, when the provider decides it instead of the memory's
   * own connections (an organization member's replica: only the member credential, read-only).
   */
  connect?(token: string): Promise<Connection>
}

/**
 * A Node memory on an in-process IndexedDB. With `dir`, it is the durable store kept in that
 * folder (same id, connections and contents at every start); without, it lives as long as the process.
 */
export function localMemoryProvider(opts: { name?: string; dir?: string; embedder?: Embedder; store?: DurableStoreOptions } = {}): MemoryProvider {
  let opened: Promise<{ memory: Memory; close(): Promise<void> }> | undefined
  const open = async (): Promise<{ memory: Memory; close(): Promise<void> }> => {
    if (opts.dir) return openNodeMemory(opts.dir, { ...opts.store, ...(opts.name ? { name: opts.name } : {}), ...(opts.embedder ? { embedder: opts.embedder } : {}) })
    const memory = await Memory.create({ name: opts.name ?? 'agent memory', indexedDB: new IDBFactory(), IDBKeyRange, ...(opts.embedder ? { embedder: opts.embedder } : {}) })
    return { memory, close: () => memory.close() }
  }
  return {
    async memory() {
      opened ??= open()
      return (await opened).memory
    },
    async close() {
      if (!opened) return
      const o = await opened.catch(() => undefined)
      await o?.close()
    },
  }
}

/**
 * A Node replica of a memory that lives on a sync server: it starts empty, fills from the
 * server, and every tool call's write syncs back, so a desktop agent and the app share one
 * memory. `syncToken` is a connection token of `memoryId`: one its owner made (in the app, the
 * library or the CLI), or one the sync server issued.
 */
export function syncedMemoryProvider(opts: {
  memoryId: string
  serverUrl: string
  syncToken: string
  name?: string
  /** The memory's own retrieval config, so the replica ranks as the devices do; with a model, `embedder` is that model. */
  retrieval?: Partial<RetrievalConfig>
  embedder?: Embedder
  timeoutMs?: number
}): MemoryProvider {
  let opened: Promise<Memory> | undefined
  const open = async (): Promise<Memory> => {
    const { WebSocket } = await import('ws')
    const memory = await Memory.create({
      id: opts.memoryId, name: opts.name ?? 'synced memory', indexedDB: new IDBFactory(), IDBKeyRange,
      ...(opts.retrieval ? { retrieval: opts.retrieval } : {}), ...(opts.embedder ? { embedder: opts.embedder } : {}),
    })
    try {
      const sync = await memory.sync({ serverUrl: opts.serverUrl, token: opts.syncToken, WebSocketPolyfill: WebSocket, crossTab: false })
      await sync.client!.whenSynced(opts.timeoutMs ?? 10_000)
      await sync.settled()
      // A token the memory's owner made is one of the memory's connections: when the server
      // refuses it as revoked (a revoke made while this replica was away), the replica stops it too.
      const own = await memory.connectWithToken(opts.syncToken).catch(() => null)
      if (own) {
        sync.client!.on('status', (s) => {
          if (s.state === 'denied' && s.closed?.code === CLOSE.revoked) void memory.revoke(own.id).catch(() => undefined)
        })
      }
      return memory
    } catch (e) {
      await memory.close()
      throw e
    }
  }
  return {
    async memory() {
      opened ??= open()
      return opened
    },
    async close() {
      if (opened) await (await opened.catch(() => null))?.close()
    },
  }
}

/**
 * A replica of an organization memory, opened with a member's credential: the sync server
 * lets it read (never write), and the replica serves it with one `read` connection, opened by
 * the same credential. When the member is removed or the memory made private, the server
 * closes the replica's socket and the connection is revoked: calls fail with `revoked`.
 */
export function organizationMemoryProvider(opts: { memoryId: string; serverUrl: string; credential: string; timeoutMs?: number }): MemoryProvider {
  let opened: Promise<{ memory: Memory; connection: Connection }> | undefined
  const open = async () => {
    const { WebSocket } = await import('ws')
    return joinOrganizationMemory({
      serverUrl: opts.serverUrl, credential: opts.credential, memoryId: opts.memoryId,
      indexedDB: new IDBFactory(), IDBKeyRange, WebSocketPolyfill: WebSocket, crossTab: false,
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    })
  }
  const digest = (t: string) => createHash('sha256').update(t.trim(), 'utf8').digest()
  return {
    async memory() {
      opened ??= open()
      return (await opened).memory
    },
    async connect(token) {
      opened ??= open()
      const { memory, connection } = await opened
      if (!timingSafeEqual(digest(token), digest(opts.credential))) throw new MemoryError('forbidden', 'this replica serves its member credential only')
      if (memory.listConnections().find((c) => c.id === connection.id)?.revokedAt) throw new MemoryError('revoked', 'this member can no longer read the memory')
      return connection
    },
    async close() {
      if (opened) await (await opened.catch(() => null))?.memory.close()
    },
  }
}
