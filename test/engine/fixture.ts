// A fresh memory in its own fake IndexedDB for each test.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Connection, type Memory, type Tier } from '../../src/index'
import type { Embedder } from '../../src/search/embedder'

export interface Fixture {
  memory: Memory
  conn: Connection
  factory: IDBFactory
  reopen(embedder?: Embedder): Promise<Memory>
}

export async function fixture(opts: { tier?: Tier; embedder?: Embedder; snippetLength?: number } = {}): Promise<Fixture> {
  const factory = new IDBFactory()
  const deps = { indexedDB: factory, IDBKeyRange }
  const memory = await createMemory({
    name: 'test memory',
    ...deps,
    ...(opts.embedder ? { embedder: opts.embedder } : {}),
    ...(opts.snippetLength ? { retrieval: { snippetLength: opts.snippetLength } } : {}),
  })
  const conn = await memory.connect({ agent: 'test-agent', tier: opts.tier ?? 'full' })
  return {
    memory,
    conn,
    factory,
    reopen: (embedder) => openMemory(memory.info.id, { ...deps, ...(embedder ? { embedder } : {}) }),
  }
}

export const ada = { name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first published algorithm for a machine' }
export const engine = { name: 'Analytical Engine', type: 'project', description: "Charles Babbage's proposed mechanical general-purpose computer" }
export const society = { name: 'Royal Society', type: 'organization', description: 'Learned society for science in London' }
