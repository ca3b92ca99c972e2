// The worker side of the engine boundary: memories and connections handed out as Comlink proxies.
// The memory list is read with IndexedDB itself (registry-read.ts); the rest of the engine
// (Dexie, graph, search, sync, interop) is a dynamic import, loaded a moment after the first list
// or when a memory is opened, created, imported, joined or deleted before that. A cold start then
// shows the list without fetching and compiling all of it first.
import * as Comlink from 'comlink'
import type { EmbedderLoader, EngineHost } from './hosted-engine'
import { readMemoryList } from './registry-read'
import { installErrorTransfer } from './wire'

export type { EmbedderLoader, EngineHost, HostedMemory } from './hosted-engine'

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
