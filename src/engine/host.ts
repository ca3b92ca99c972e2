// The worker side of the engine boundary: memories and connections handed out as Comlink proxies.
import * as Comlink from 'comlink'
import type { ConnectionHandle } from './connection'
import { Memory, listMemories, type CreateMemoryOptions, type OpenMemoryOptions } from './open'
import type { MemoryInfo, Tier } from '../core/types'
import type { Embedder } from '../search/embedder'
import { installErrorTransfer } from './wire'

export type EmbedderLoader = (id: string) => Promise<Embedder | undefined>

/** A memory as the page sees it: every method async, connections returned as proxies. */
export class HostedMemory {
  constructor(private readonly memory: Memory) {}
  /** A getter as in-process, so `await memory.info` reads the same on both sides of the boundary. */
  get info(): MemoryInfo {
    return this.memory.info
  }
  async connect(opts: { agent: string; tier?: Tier }): Promise<ConnectionHandle & Comlink.ProxyMarked> {
    return Comlink.proxy(await this.memory.connect(opts))
  }
  async connectWithToken(token: string): Promise<ConnectionHandle & Comlink.ProxyMarked> {
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
  async close(): Promise<void> {
    await this.memory.close()
  }
}

export interface EngineHost {
  createMemory(opts: Omit<CreateMemoryOptions, 'embedder' | 'indexedDB' | 'IDBKeyRange'> & { embedderId?: string }): Promise<HostedMemory & Comlink.ProxyMarked>
  openMemory(id: string): Promise<HostedMemory & Comlink.ProxyMarked>
  listMemories(): Promise<MemoryInfo[]>
}

export function createEngineHost(loadEmbedder: EmbedderLoader = async () => undefined): EngineHost {
  const open = new Map<string, HostedMemory>()
  return {
    async createMemory(opts) {
      const { embedderId, ...rest } = opts
      const embedder = embedderId ? await loadEmbedder(embedderId) : undefined
      const memory = await Memory.create({ ...rest, ...(embedder ? { embedder } : {}) })
      const hosted = new HostedMemory(memory)
      open.set(memory.info.id, hosted)
      return Comlink.proxy(hosted)
    },
    async openMemory(id) {
      const cached = open.get(id)
      if (cached) return Comlink.proxy(cached)
      const info = (await listMemories()).find((m) => m.id === id)
      const embedder = info && info.retrieval.embedder !== 'bm25-only' ? await loadEmbedder(info.retrieval.embedder) : undefined
      const options: OpenMemoryOptions = embedder ? { embedder } : {}
      const hosted = new HostedMemory(await Memory.open(id, options))
      open.set(id, hosted)
      return Comlink.proxy(hosted)
    },
    listMemories: () => listMemories(),
  }
}

export function exposeEngine(endpoint: Comlink.Endpoint, loadEmbedder?: EmbedderLoader): void {
  installErrorTransfer()
  Comlink.expose(createEngineHost(loadEmbedder), endpoint)
}
