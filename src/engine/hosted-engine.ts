// The engine behind the worker boundary beyond the memory list: opening, creating, importing and
// joining memories. Loaded by `createEngineHost` (host.ts) on first use, so the list does not wait for it.
import * as Comlink from 'comlink'
import type { Connection } from './connection'
import { Memory, listMemories, type CreateMemoryOptions, type OpenMemoryOptions } from './memory-handle'
import type { MemoryInfo, Tier, Visibility } from '../core/types'
import type { SyncView } from '../sync/memory-sync'
import { exportMemory, importMemory, type MemoryBackup } from './backup'
import { deleteMemory, renameMemory } from './memory-admin'
import { importInto, type ImportOutcome } from '../interop/import'
import { exportGraphJson, type GraphExport } from '../interop/json-export'
import { buildMarkdownVault } from '../interop/markdown-vault'
import { zipStore } from '../interop/zip'
import { joinOrganizationMemory, listOrganizationMemories, type OrganizationListing } from './organizations'
import type { Embedder } from '../search/embedder'
import { ownerOf } from './owner-door'

/** The worker's host: `host.ts` answers the memory list itself and loads this module for the rest. */
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

/** A memory as the page sees it: every method async, connections returned as proxies. */
export class HostedMemory {
  constructor(private readonly memory: Memory) {}
  /** A getter as in-process, so `await memory.info` reads the same on both sides of the boundary. */
  get info(): MemoryInfo {
    return this.memory.info
  }
  async connect(opts: { agent: string; tier?: Tier; localOnly?: boolean }): Promise<Connection & Comlink.ProxyMarked> {
    return Comlink.proxy(await this.memory.connect(opts))
  }
  async connectWithToken(token: string): Promise<Connection & Comlink.ProxyMarked> {
    return Comlink.proxy(await this.memory.connectWithToken(token))
  }
  async listConnections(): Promise<ReturnType<Memory['listConnections']>> {
    return this.memory.listConnections()
  }
  async revoke(id: string): Promise<void> {
    await this.memory.revoke(id)
  }
  async saveIndex(): Promise<void> {
    await this.memory.saveIndex()
  }
  /** Connects to a sync server with the token it issued for this memory. */
  async syncWith(serverUrl: string, token: string): Promise<SyncView> {
    if (typeof serverUrl !== 'string' || !/^wss?:\/\//.test(serverUrl)) throw new TypeError('the sync server address starts with ws:// or wss://')
    if (typeof token !== 'string' || !token) throw new TypeError('a sync token is needed')
    return (await this.memory.sync({ serverUrl, token })).view
  }
  async syncView(): Promise<SyncView> {
    return (await this.memory.sync()).view
  }
  /** Calls `listener` (a Comlink proxy) on every sync change; resolves to the unsubscribe. */
  async watchSync(listener: (view: SyncView) => void): Promise<(() => void) & Comlink.ProxyMarked> {
    const sync = await this.memory.sync()
    listener(sync.view)
    return Comlink.proxy(sync.onView((view) => void Promise.resolve(listener(view)).catch(() => undefined)))
  }
  /** Calls `listener` (a Comlink proxy) after every change readers can see; resolves to the unsubscribe. */
  async watchChanges(listener: () => void): Promise<(() => void) & Comlink.ProxyMarked> {
    // a page that went away must not hold up the engine: the call is not awaited
    return Comlink.proxy(ownerOf(this.memory).onChange(() => void Promise.resolve(listener()).catch(() => undefined)))
  }
  /** The whole memory as a versioned JSON object, for backup or moving it to another device. */
  async exportBackup(): Promise<MemoryBackup> {
    return exportMemory(this.memory)
  }
  /** Adds an MCP memory server file, or merges a Cairn backup, into this memory. */
  async importFile(text: string, fileName?: string): Promise<ImportOutcome> {
    if (typeof text !== 'string') throw new TypeError('the file to import is passed as text')
    return importInto(this.memory, text, fileName ? { fileName } : {})
  }
  /** The backup plus the derived entities and relationships. */
  async exportGraph(): Promise<GraphExport> {
    return exportGraphJson(this.memory)
  }
  /** The Markdown vault as one ZIP archive, inside `folder`; its bytes are moved to the page, not copied. */
  async exportVault(folder: string): Promise<Uint8Array> {
    const { files } = await buildMarkdownVault(this.memory)
    const zip = zipStore(files.map((f) => ({ ...f, path: `${folder}/${f.path}` })))
    return Comlink.transfer(zip, [zip.buffer])
  }
  async rename(name: string): Promise<MemoryInfo> {
    return renameMemory(this.memory, name)
  }
  /** The owner's act: organization-visible for `orgId`'s members, or private again (see Memory.setVisibility). */
  async setVisibility(visibility: Visibility, orgId?: string): Promise<MemoryInfo> {
    return this.memory.setVisibility(visibility, orgId)
  }
  /** The relationship types declared single-valued (see Memory.singleValued). */
  async singleValued(): Promise<string[]> {
    return this.memory.singleValued()
  }
  /** The owner's act: which relationship types hold one target at a time (see Memory.setSingleValued). */
  async setSingleValued(types: string[]): Promise<string[]> {
    return this.memory.setSingleValued(types)
  }
  async close(): Promise<void> {
    await this.memory.close()
  }
}

/**
 * Every open memory keeps its sync document, so other tabs see its writes. The document is
 * loaded and reconciled after the memory answers: at 100,000 notes that reads a document of
 * about 100 MB, seconds a recall need not wait for. Writes meanwhile wait in the commit journal
 * and reach the document when it is bound; a failed start is tried again by the next `sync()`.
 */
function keepSyncDocument(memory: Memory): void {
  memory.sync().catch(() => undefined)
}

/** Everything the host does beyond listing memories; `createEngineHost` loads it on first use. */
export function createFullHost(loadEmbedder: EmbedderLoader): EngineHost {
  // promises, so two screens opening one memory at once share one open
  const open = new Map<string, Promise<HostedMemory>>()
  /** The memories behind `open`, so a delete can close one before removing its database. */
  const memories = new Map<string, Memory>()
  const load = async (id: string): Promise<HostedMemory> => {
    const info = (await listMemories()).find((m) => m.id === id)
    const embedder = info && info.retrieval.embedder !== 'bm25-only' ? await loadEmbedder(info.retrieval.embedder) : undefined
    const options: OpenMemoryOptions = embedder ? { embedder } : {}
    const memory = await Memory.open(id, options)
    keepSyncDocument(memory)
    memories.set(id, memory)
    return new HostedMemory(memory)
  }
  return {
    async createMemory(opts) {
      const { embedderId, ...rest } = opts
      const embedder = embedderId ? await loadEmbedder(embedderId) : undefined
      const memory = await Memory.create({ ...rest, ...(embedder ? { embedder } : {}) })
      keepSyncDocument(memory)
      const hosted = new HostedMemory(memory)
      open.set(memory.info.id, Promise.resolve(hosted))
      memories.set(memory.info.id, memory)
      return Comlink.proxy(hosted)
    },
    async openMemory(id) {
      let hosted = open.get(id)
      if (!hosted) {
        hosted = load(id)
        hosted.catch(() => open.delete(id))
        open.set(id, hosted)
      }
      return Comlink.proxy(await hosted)
    },
    listMemories: () => listMemories(),
    async deleteMemory(id) {
      // an open still in progress finishes first, so its database is closed before it is deleted
      await open.get(id)?.catch(() => undefined)
      const memory = memories.get(id)
      open.delete(id)
      memories.delete(id)
      await deleteMemory(id, memory)
    },
    listOrganization: (serverUrl, credential) => listOrganizationMemories({ serverUrl, credential }),
    async joinOrganization(serverUrl, credential, memoryId) {
      // an open copy is closed first: the join reopens it with the member's sync
      await open.get(memoryId)?.then((h) => h.close()).catch(() => undefined)
      open.delete(memoryId)
      memories.delete(memoryId)
      // ranked by words: the listing does not carry the owner's retrieval config
      const { memory, connection } = await joinOrganizationMemory({ serverUrl, credential, memoryId })
      open.set(memoryId, Promise.resolve(new HostedMemory(memory)))
      memories.set(memoryId, memory)
      return { memoryId, readToken: connection.token! }
    },
    async importBackup(backup) {
      const retrieval = (backup as { info?: { retrieval?: { embedder?: unknown } } } | null)?.info?.retrieval
      const embedderId = typeof retrieval?.embedder === 'string' && retrieval.embedder !== 'bm25-only' ? retrieval.embedder : undefined
      const embedder = embedderId ? await loadEmbedder(embedderId) : undefined
      const memory = await importMemory(backup, embedder ? { embedder } : {})
      keepSyncDocument(memory)
      const hosted = new HostedMemory(memory)
      open.set(memory.info.id, Promise.resolve(hosted))
      memories.set(memory.info.id, memory)
      return Comlink.proxy(hosted)
    },
  }
}
