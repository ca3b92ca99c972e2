// Cairn loaded through the public library on fake-indexeddb: one write per note, then recall.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, type Connection, type Embedder, type Memory } from '../../../src/index'
import type { PeerSystem } from './system'

export function cairnSystem(embedder?: Embedder): PeerSystem {
  let memory: Memory | undefined
  let conn: Connection | undefined
  return {
    name: embedder ? 'cairn-hybrid' : 'cairn-bm25',
    async load(w) {
      memory = await createMemory({ name: 'peers', indexedDB: new IDBFactory(), IDBKeyRange, ...(embedder ? { embedder } : {}) })
      conn = await memory.connect({ agent: 'bench', tier: 'full' })
      for (const note of w.notes) {
        await conn.write({
          title: note.title,
          content: note.content,
          entities: note.entities,
          relationships: note.relations.map((r) => ({ source: r.from, type: r.type, target: r.to })),
        })
      }
      const stored = memory.engine.committedGraph.entities.size
      if (stored !== w.entities.length) throw new Error(`cairn stored ${stored} entities, expected ${w.entities.length}`)
    },
    async search(query) {
      const r = await conn!.recall({ query })
      return { entities: r.entities.length, relations: r.relationships.length }
    },
    async open(names) {
      const details = await Promise.all(names.map((n) => conn!.inspect(n)))
      return { entities: details.length, relations: details.reduce((s, d) => s + d.outgoing.length + d.incoming.length, 0) }
    },
    async close() {
      await memory?.close()
    },
  }
}
