// Bare full-text indexes over the same entity texts (name, type, description): what BM25 alone
// costs with no graph, no storage and no relations around it.
import { create, insertMultiple, search, type AnyOrama } from '@orama/orama'
import MiniSearch from 'minisearch'
import type { PeerSystem } from './system'

export function oramaSystem(limit = 10): PeerSystem {
  let db: AnyOrama | undefined
  return {
    name: 'orama',
    async load(w) {
      db = create({ schema: { name: 'string', type: 'string', description: 'string' } as const })
      await insertMultiple(db, w.entities.map((e) => ({ ...e })), 1_000)
    },
    async search(term) {
      const r = await search(db!, { term, limit })
      return { entities: r.hits.length, relations: 0 }
    },
    async close() {},
  }
}

export function miniSearchSystem(limit = 10): PeerSystem {
  let index: MiniSearch | undefined
  return {
    name: 'minisearch',
    async load(w) {
      index = new MiniSearch({ idField: 'name', fields: ['name', 'type', 'description'] })
      index.addAll(w.entities)
      await Promise.resolve()
    },
    async search(q) {
      // MiniSearch returns every match; keep the same top-k as the others
      return { entities: index!.search(q).slice(0, limit).length, relations: 0 }
    },
    async close() {},
  }
}
