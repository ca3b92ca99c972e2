// Accepting a merge on a memory that already holds N observations: the alias map changes, the
// notes that name the variant are derived again, and the change is saved in one transaction.
// Each variant ("Entity 17 Inc" beside "Entity 17") is named by `naming` notes, so the work per
// accept is the same at every N and what grows with N is only what the memory already holds.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory } from '../../src/index'
import type { Observation } from '../../src/core/types'
import type { Embedder } from '../../src/search/embedder'
import { engineOf } from '../../src/internals'
import { observation } from './rederive'

export interface AliasAcceptRow {
  recall: 'bm25' | 'hybrid'
  held: number
  /** Notes that name each variant. */
  naming: number
  accepts: number
  acceptP50Ms: number
  acceptMaxMs: number
}

export interface AliasAcceptOptions {
  /** Timed accepts per size; default 9 (plus one untimed warm-up). */
  accepts?: number
  naming?: number
  embedder?: Embedder
}

/** A note naming the variant of held entity `id`, beside that entity's own neighbors. */
function variantNote(id: number, n: number, pool: number): Observation {
  const base = observation(id, pool)
  const variant = `Entity ${id} Inc`
  const first = base.entities[0]!
  return {
    ...base,
    slug: `variant-${id}-${n}`,
    title: `${variant}, note ${n}`,
    entities: [{ ...first, name: variant }, ...base.entities.slice(1)],
    relationships: base.relationships.map((r) => ({ ...r, source: r.source === first.name ? variant : r.source, target: r.target === first.name ? variant : r.target })),
  }
}

export async function benchAliasAccept(sizes: number[], options: AliasAcceptOptions = {}): Promise<AliasAcceptRow[]> {
  const accepts = options.accepts ?? 9
  const naming = options.naming ?? 20
  const rows: AliasAcceptRow[] = []
  for (const held of sizes) {
    const pool = Math.max(10, held)
    const memory = await createMemory({ name: `alias-accept-${held}`, indexedDB: new IDBFactory(), IDBKeyRange, ...(options.embedder ? { embedder: options.embedder } : {}) })
    try {
      const engine = engineOf(memory)
      // ids spread over the pool, so the variants' neighbors differ
      const ids = Array.from({ length: accepts + 1 }, (_, k) => Math.floor(((k + 0.5) * pool) / (accepts + 1)))
      const notes = [
        ...Array.from({ length: held }, (_, i) => observation(i, pool)),
        ...ids.flatMap((id) => Array.from({ length: naming }, (_, n) => variantNote(id, n, pool))),
      ]
      await engine.importObservations(notes, [])
      const conn = await memory.connect({ agent: 'bench', tier: 'full' })
      const proposals = await conn.consolidate()
      const ours = ids.map((id) => {
        const pair = [`entity ${id}`, `entity ${id} inc`]
        const p = proposals.find((q) => pair.every((k) => q.pair.includes(k)))
        if (!p) throw new Error(`consolidation did not propose merging "Entity ${id}" and "Entity ${id} Inc"`)
        return p
      })
      const samples: number[] = []
      for (const [k, p] of ours.entries()) {
        const t0 = performance.now()
        await conn.acceptProposal(p.id, { canonical: `Entity ${ids[k]}` })
        const ms = performance.now() - t0
        if (k > 0) samples.push(ms)
      }
      if ((await conn.inspect(`Entity ${ids[0]} Inc`)).entity.name !== `Entity ${ids[0]}`) throw new Error('the accepted merge did not take effect')
      const sorted = [...samples].sort((a, b) => a - b)
      rows.push({ recall: options.embedder ? 'hybrid' : 'bm25', held, naming, accepts, acceptP50Ms: round(sorted[Math.floor(sorted.length / 2)]!), acceptMaxMs: round(sorted[sorted.length - 1]!) })
    } finally {
      await memory.close()
    }
  }
  return rows
}

const round = (x: number) => Math.round(x * 1000) / 1000
