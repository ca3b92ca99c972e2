// Re-derivation after a merge: a device holding N observations receives K new ones from a
// peer through its sync document. If re-derivation is proportional to what changed, the cost
// per merged observation stays flat as N grows.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import * as Y from 'yjs'
import { createMemory, type Memory } from '../../src/index'
import type { Observation } from '../../src/core/types'
import { bindMemoryDoc, type DocBinding } from '../../src/sync/doc-bridge'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { observationFor } from './engine'
import type { Embedder } from '../../src/search/embedder'
import { engineOf } from '../../src/internals'

/** Observation `i` of the engine bench's workload, as a sync document holds it (3 entities, 2 relationships). */
export function observation(i: number, pool: number): Observation {
  const input = observationFor(i, pool)
  const at = input.observedAt!
  return {
    slug: `observation-${i}`, title: input.title, content: input.content, category: input.category ?? '', tags: input.tags ?? [], observedAt: at,
    confidence: 1, source: '', files: [], createdBy: 'bench', createdAt: at, updatedAt: at,
    entities: (input.entities ?? []).map((e) => ({ name: e.name, type: e.type ?? '', description: e.description ?? '', queries: [] })),
    relationships: (input.relationships ?? []).map((r) => ({ source: r.source, type: r.type, target: r.target, description: '', weight: 1 })),
  }
}

export interface RederiveRow {
  recall: string
  held: number
  merged: number
  mergeMs: number
  perObservationMs: number
}

export interface HeldMemory {
  memory: Memory
  /** The memory's sync document, bound to its engine. */
  doc: Y.Doc
  binding: DocBinding
  /** A peer device holding the same document; its updates are the remote changes. */
  peer: Y.Doc
}

/** A memory (on fake-indexeddb) that has merged and derived `held` observations from a peer. */
export async function openHeld(held: number, pool: number, embedder?: Embedder): Promise<HeldMemory> {
  const memory = await createMemory({ name: `rederive-${held}`, indexedDB: new IDBFactory(), IDBKeyRange, ...(embedder ? { embedder } : {}) })
  const doc = createMemoryDoc()
  const binding = await bindMemoryDoc(engineOf(memory), doc)
  const peer = createMemoryDoc()
  applyMemoryWrites(peer, { observations: { put: Array.from({ length: held }, (_, i) => observation(i, pool)) } })
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(peer), 'peer')
  await binding.settled()
  return { memory, doc, binding, peer }
}

/** Times applying `merged` remote observations on top of `held` already-derived ones. */
export async function benchRederive(sizes: number[], merged = 100, embedder?: Embedder): Promise<RederiveRow[]> {
  const rows: RederiveRow[] = []
  for (const held of sizes) {
    const pool = Math.max(10, held + merged)
    const { memory, doc, binding, peer } = await openHeld(held, pool, embedder)
    const before = Y.encodeStateVector(peer)
    applyMemoryWrites(peer, { observations: { put: Array.from({ length: merged }, (_, i) => observation(held + i, pool)) } })
    const update = Y.encodeStateAsUpdate(peer, before)
    const t0 = performance.now()
    Y.applyUpdate(doc, update, 'peer')
    await binding.settled()
    const mergeMs = performance.now() - t0
    if (engineOf(memory).committedGraph.observationCount !== held + merged) throw new Error('merge did not apply every observation')
    rows.push({ recall: embedder ? 'hybrid' : 'bm25', held, merged, mergeMs: round(mergeMs), perObservationMs: round(mergeMs / merged) })
    binding.stop()
    await memory.close()
  }
  return rows
}

const round = (x: number) => Math.round(x * 1000) / 1000
