// The worker side of the engine boundary: memories and connections handed out as Comlink proxies.
// The memory list is read with IndexedDB itself (registry-read.ts); the rest of the engine
// (Dexie, graph, search, sync, interop) is a dynamic import, loaded a moment after the first list
// or when a memory is opened, created, imported, joined or deleted before that. A cold start then
// shows the list without fetching and compiling all of it first.
import * as Comlink from 'comlink'
import type { MemoryInfo } from '../core/types'
import type { Embedder } from '../search/embedder'
import type { CreateMemoryOptions } from './memory-handle'
import type { HostedMemory } from './hosted-engine'
import type { OrganizationListing } from './organizations'
import { readMemoryList } from './registry-read'
import { installErrorTransfer } from './wire'

export type { HostedMemory } from './hosted-engine'

export type EmbedderLoader = (id: string) => Promise<Embedder | undefined>

export interface EngineHost {
  createMemory(opts: Omit<CreateMemoryOptions, 'embedder' | 'indexedDB' | 'IDBKeyRange'> & { embedderId?: string }): Promise<HostedMemory & Comlink.ProxyMarked>
  openMemory(id: string): Promise<HostedMemory & Comlink.ProxyMarked>
  listMemories(): Promise<MemoryInfo[]>
  /** Rebuilds a backup (parsed JSON) as a new memory with the backup's retrieval config. */
  importBackup(backup: unknown): Promise<HostedMemory & Comlink.ProxyMarked>
  /** Removes this device's copy of a memory: its database and its place in the list. */
  deleteMemory(id: string): Promise<void>
  /** The memories an organization member may read on a sync server. */
  listOrganization(serverUrl: string, credential: string): Promise<OrganizationListing>
  /** This device's copy of an organization memory, synced with the member credential; the token of its `read` connection. */
  joinOrganization(serverUrl: string, credential: string, memoryId: string): Promise<{ memoryId: string; readToken: string }>
}

/** Long enough for the page to have shown the list, and to have settled, before the worker fetches and compiles the rest. */
const WARM_UP_DELAY_MS = 3_000

export function createEngineHost(loadEmbedder: EmbedderLoader = async () => undefined): EngineHost {
  let full: Promise<EngineHost> | undefined
  let warm: ReturnType<typeof setTimeout> | undefined
  const engine = (): Promise<EngineHost> => {
    if (!full) {
      const loading = import('./hosted-engine').then((m) => m.createFullHost(loadEmbedder))
      // a failed load (the chunk unreachable) is tried again on the next call
      loading.catch(() => {
        if (full === loading) full = undefined
      })
      full = loading
    }
    return full
  }
  return {
    createMemory: async (opts) => (await engine()).createMemory(opts),
    openMemory: async (id) => (await engine()).openMemory(id),
    async listMemories() {
      const list = await readMemoryList()
      // A moment after the first answer, the rest of the engine loads in the background: opening
      // a memory then does not wait for it, and a first visit that goes offline still has it.
      warm ??= setTimeout(() => void engine().catch(() => undefined), WARM_UP_DELAY_MS)
      return list
    },
    importBackup: async (backup) => (await engine()).importBackup(backup),
    deleteMemory: async (id) => (await engine()).deleteMemory(id),
    listOrganization: async (serverUrl, credential) => (await engine()).listOrganization(serverUrl, credential),
    joinOrganization: async (serverUrl, credential, memoryId) => (await engine()).joinOrganization(serverUrl, credential, memoryId),
  }
}

export function exposeEngine(endpoint: Comlink.Endpoint, loadEmbedder?: EmbedderLoader): void {
  installErrorTransfer()
  Comlink.expose(createEngineHost(loadEmbedder), endpoint)
}
