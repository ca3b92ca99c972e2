// Cairn loaded through the public library on fake-indexeddb, then recall. Up to
// CAIRN_WRITE_LOAD_LIMIT entities the store is filled with one write per note, as an agent
// fills it; above, the notes are imported as a backup restore does (engine.importObservations:
// one transaction, one derivation, the index built once), so 100k entities load in seconds.
// Queries run on the same graph and index either way.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, type Connection, type Embedder, type Memory, type ObservationInput } from '../../../src/index'
import { stampObservations } from '../stamped'
import type { PeerSystem } from './system'
import type { PeerNote } from './workload'
import { engineOf } from '../../../src/internals'

export const CAIRN_WRITE_LOAD_LIMIT = 10_000

export interface CairnSystem extends PeerSystem {
  loadedThroughWrites: boolean
}

function inputOf(note: PeerNote): ObservationInput {
  return {
    title: note.title,
    content: note.content,
    entities: note.entities,
    relationships: note.relations.map((r) => ({ source: r.from, type: r.type, target: r.to })),
  }
}

export function cairnSystem(embedder?: Embedder, writeLoadLimit = CAIRN_WRITE_LOAD_LIMIT): CairnSystem {
  let memory: Memory | undefined
  let conn: Connection | undefined
  const system: CairnSystem = {
    name: embedder ? 'cairn-hybrid' : 'cairn-bm25',
    loadedThroughWrites: true,
    async load(w) {
      memory = await createMemory({ name: 'peers', indexedDB: new IDBFactory(), IDBKeyRange, ...(embedder ? { embedder } : {}) })
      conn = await memory.connect({ agent: 'bench', tier: 'full' })
      system.loadedThroughWrites = w.entities.length <= writeLoadLimit
      if (system.loadedThroughWrites) for (const note of w.notes) await conn.write(inputOf(note))
      else await engineOf(memory).importObservations(stampObservations(w.notes.map(inputOf)), [])
      const stored = engineOf(memory).committedGraph.entities.size
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
  return system
}
