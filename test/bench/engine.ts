// Engine benchmark: write throughput and latency, recall latency, derive-from-scratch time,
// on a generated workload (each observation names 3 entities and states 2 relationships).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Connection, type Memory, type ObservationInput } from '../../src/index'
import { Graph } from '../../src/core/graph'
import { percentile } from './stats'
import type { Embedder } from '../../src/search/embedder'
import { engineOf } from '../../src/internals'

// Real English words (ranks 200..8,200 of the shipped GloVe vocabulary), so postings have realistic lengths.
const WORDS = readFileSync(fileURLToPath(new URL('../../public/models/cairn-glove-100d.vocab.txt', import.meta.url)), 'utf8')
  .split('\n')
  .map((l) => l.split('\t')[0]!)
  .filter((w) => /^[a-z]{3,}$/.test(w))
  .slice(200, 8_200)

/** Deterministic word choice with a skew toward common words, as in real descriptions. */
export function word(seed: number): string {
  let x = (seed * 2654435761) >>> 0
  x ^= x >>> 15
  x = Math.imul(x, 2246822519) >>> 0
  x ^= x >>> 13
  const u = x / 4294967296
  return WORDS[Math.floor(u * u * WORDS.length)]!
}

/** A deterministic workload: entity i is described by words chosen from i, so queries have real matches. */
export function observationFor(i: number, entityPool: number): ObservationInput {
  const ids = [i % entityPool, (i * 7 + 3) % entityPool, (i * 13 + 5) % entityPool]
  const uniq = [...new Set(ids)]
  const entities = uniq.map((id) => ({
    name: `Entity ${id}`,
    type: ['person', 'project', 'organization'][id % 3]!,
    description: Array.from({ length: 8 }, (_, j) => word(id * 31 + j)).join(' '),
  }))
  const relationships = uniq.length >= 2
    ? [
        { source: entities[0]!.name, type: 'works_with', target: entities[1]!.name },
        ...(uniq.length >= 3 ? [{ source: entities[1]!.name, type: 'part_of', target: entities[2]!.name }] : []),
      ]
    : []
  return { title: `Observation ${i}`, content: `Note ${i}: ${Array.from({ length: 30 }, (_, j) => word(i * 97 + j + 5)).join(' ')}.`, category: ['meeting', 'idea', 'fact'][i % 3]!, tags: [`tag${i % 5}`], observedAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), entities, relationships }
}

export async function filled(n: number, embedder?: Embedder): Promise<{ conn: Connection; graph: Graph; memory: Memory; factory: IDBFactory; writeMs: number[]; totalMs: number }> {
  const factory = new IDBFactory()
  const memory = await createMemory({ name: `bench-${n}`, indexedDB: factory, IDBKeyRange, ...(embedder ? { embedder } : {}) })
  const conn = await memory.connect({ agent: 'bench', tier: 'full' })
  const pool = Math.max(10, Math.floor(n * 1.0))
  const writeMs: number[] = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await conn.write(observationFor(i, pool))
    writeMs.push(performance.now() - s)
  }
  return { conn, graph: engineOf(memory).committedGraph, memory, factory, writeMs, totalMs: performance.now() - t0 }
}

export interface EngineBenchRow {
  recall: 'bm25' | 'hybrid'
  observations: number
  writesPerSecond: number
  writeP50Ms: number
  writeP95Ms: number
  recallP50Ms: number
  recallP95Ms: number
  structuralP50Ms: number
  deriveFromScratchMs: number
  /** close (saving the index), then open again: read IndexedDB, re-derive, restore the index */
  coldOpenMs: number
  entities: number
  relationships: number
}

export async function benchEngine(sizes: number[], embedder?: Embedder): Promise<EngineBenchRow[]> {
  const rows: EngineBenchRow[] = []
  for (const n of sizes) {
    const { conn, graph, memory, factory, writeMs, totalMs } = await filled(n, embedder)
    const recallMs: number[] = []
    for (let q = 0; q < 200; q++) {
      const s = performance.now()
      // two words of some entity's description, as a person would half-remember it
      const id = (q * 7919) % Math.max(10, n)
      await conn.recall({ query: `${word(id * 31 + 1)} ${word(id * 31 + 4)}` })
      recallMs.push(performance.now() - s)
    }
    const structMs: number[] = []
    for (let q = 0; q < 50; q++) {
      const s = performance.now()
      await conn.recall({ category: 'idea', tags: [`tag${q % 5}`], limits: { observations: 10 } })
      structMs.push(performance.now() - s)
    }
    const observations = [...graph.allObservations()]
    const deriveRuns: number[] = []
    for (let r = 0; r < 3; r++) {
      const d0 = performance.now()
      Graph.derive(observations, graph.aliasMap())
      deriveRuns.push(performance.now() - d0)
    }
    const deriveMs = percentile(deriveRuns, 50)
    await memory.close()
    const o0 = performance.now()
    const reopened = await openMemory(memory.info.id, { indexedDB: factory, IDBKeyRange, ...(embedder ? { embedder } : {}) })
    const coldOpenMs = performance.now() - o0
    await reopened.close()
    rows.push({
      recall: embedder ? 'hybrid' : 'bm25',
      observations: n,
      writesPerSecond: Math.round((n / totalMs) * 1000),
      writeP50Ms: percentile(writeMs, 50),
      writeP95Ms: percentile(writeMs, 95),
      recallP50Ms: percentile(recallMs, 50),
      recallP95Ms: percentile(recallMs, 95),
      structuralP50Ms: percentile(structMs, 50),
      deriveFromScratchMs: Math.round(deriveMs * 10) / 10,
      coldOpenMs: Math.round(coldOpenMs),
      entities: graph.entities.size,
      relationships: graph.relationships.size,
    })
  }
  return rows
}
