// Where the MCP server gets its memory. The seam lets a synced replica replace the local one
// without touching the server.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { Memory } from '../engine/open'
import { persistToDirectory } from './snapshot-file'

export interface MemoryProvider {
  memory(): Promise<Memory>
  close(): Promise<void>
}

/**
 * A Node replica on an in-process IndexedDB. With `dir`, its observations and merges are kept
 * in `dir/memory.json` across restarts; without, they live as long as the process.
 */
export function localMemoryProvider(opts: { name?: string; dir?: string } = {}): MemoryProvider {
  let opened: Promise<{ memory: Memory; stop(): Promise<void> }> | undefined
  const open = async (): Promise<{ memory: Memory; stop(): Promise<void> }> => {
    const memory = await Memory.create({ name: opts.name ?? 'agent memory', indexedDB: new IDBFactory(), IDBKeyRange })
    if (!opts.dir) return { memory, stop: async () => undefined }
    const persisted = await persistToDirectory(memory, opts.dir).catch(async (e: unknown) => {
      await memory.close()
      throw e
    })
    return { memory, stop: () => persisted.stop() }
  }
  return {
    async memory() {
      opened ??= open()
      return (await opened).memory
    },
    async close() {
      if (!opened) return
      const { memory, stop } = await opened
      await stop()
      await memory.close()
    },
  }
}

/**
 * A Node replica of a memory that lives on a sync server: it starts empty, fills from the
 * server, and every tool call's write syncs back, so a desktop agent and the app share one
 * memory. `syncToken` is the token the sync server issued for `memoryId`.
 */
export function syncedMemoryProvider(opts: { memoryId: string; serverUrl: string; syncToken: string; name?: string; timeoutMs?: number }): MemoryProvider {
  let opened: Promise<Memory> | undefined
  const open = async (): Promise<Memory> => {
    const { WebSocket } = await import('ws')
    const memory = await Memory.create({ id: opts.memoryId, name: opts.name ?? 'synced memory', indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const sync = await memory.sync({ serverUrl: opts.serverUrl, token: opts.syncToken, WebSocketPolyfill: WebSocket, crossTab: false })
      await sync.client!.whenSynced(opts.timeoutMs ?? 10_000)
      await sync.settled()
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
