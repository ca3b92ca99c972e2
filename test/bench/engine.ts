// Engine benchmark: write throughput and latency, recall latency, derive-from-scratch time,
// on a generated workload (each observation names 3 entities and states 2 relationships).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, type Connection, type ObservationInput } from '../../src/index'
import { Graph } from '../../src/core/graph'
import { percentile } from './stats'

const WORDS = 'river stone ledger orchard lantern harbor copper meadow signal archive falcon quarry glacier violet canyon beacon ember summit delta willow'.split(' ')

/** A deterministic workload: entity i is described by words chosen from i, so queries have real matches. */
export function observationFor(i: number, entityPool: number): ObservationInput {
  const ids = [i % entityPool, (i * 7 + 3) % entityPool, (i * 13 + 5) % entityPool]
  const uniq = [...new Set(ids)]
  const entities = uniq.map((id) => ({
    name: `Entity ${id}`,
    type: ['person', 'project', 'organization'][id % 3]!,
    description: `${WORDS[id % WORDS.length]} ${WORDS[(id * 3) % WORDS.length]} ${WORDS[(id * 5 + 1) % WORDS.length]} item number ${id}`,
  }))
  const relationships = uniq.length >= 2
    ? [
        { source: entities[0]!.name, type: 'works_with', target: entities[1]!.name },
        ...(uniq.length >= 3 ? [{ source: entities[1]!.name, type: 'part_of', target: entities[2]!.name }] : []),
      ]
    : []
  return { title: `Observation ${i}`, content: `Note ${i}: ${WORDS[i % WORDS.length]} met ${WORDS[(i + 7) % WORDS.length]} near the ${WORDS[(i + 11) % WORDS.length]}.`, category: ['meeting', 'idea', 'fact'][i % 3]!, tags: [WORDS[i % 5]!], observedAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), entities, relationships }
}

async function filled(n: number): Promise<{ conn: Connection; graph: Graph; writeMs: number[]; totalMs: number }> {
  const memory = await createMemory({ name: `bench-${n}`, indexedDB: new IDBFactory(), IDBKeyRange })
  const conn = await memory.connect({ agent: 'bench', tier: 'full' })
  const pool = Math.max(10, Math.floor(n * 1.0))
  const writeMs: number[] = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await conn.write(observationFor(i, pool))
    writeMs.push(performance.now() - s)
  }
  return { conn, graph: memory.engine.committedGraph, writeMs, totalMs: performance.now() - t0 }
}

export interface EngineBenchRow {
  observations: number
  writesPerSecond: number
  writeP50Ms: number
  writeP95Ms: number
  recallP50Ms: number
  recallP95Ms: number
  structuralP50Ms: number
  deriveFromScratchMs: number
  entities: number
  relationships: number
}

export async function benchEngine(sizes: number[]): Promise<EngineBenchRow[]> {
  const rows: EngineBenchRow[] = []
  for (const n of sizes) {
    const { conn, graph, writeMs, totalMs } = await filled(n)
    const recallMs: number[] = []
    for (let q = 0; q < 200; q++) {
      const s = performance.now()
      await conn.recall({ query: `${WORDS[q % WORDS.length]} ${WORDS[(q * 7) % WORDS.length]}` })
      recallMs.push(performance.now() - s)
    }
    const structMs: number[] = []
    for (let q = 0; q < 50; q++) {
      const s = performance.now()
      await conn.recall({ category: 'idea', tags: [WORDS[q % 5]!], limits: { observations: 10 } })
      structMs.push(performance.now() - s)
    }
    const observations = [...graph.allObservations()]
    const d0 = performance.now()
    Graph.derive(observations, graph.aliasMap())
    const deriveMs = performance.now() - d0
    rows.push({
      observations: n,
      writesPerSecond: Math.round((n / totalMs) * 1000),
      writeP50Ms: percentile(writeMs, 50),
      writeP95Ms: percentile(writeMs, 95),
      recallP50Ms: percentile(recallMs, 50),
      recallP95Ms: percentile(recallMs, 95),
      structuralP50Ms: percentile(structMs, 50),
      deriveFromScratchMs: Math.round(deriveMs * 10) / 10,
      entities: graph.entities.size,
      relationships: graph.relationships.size,
    })
  }
  return rows
}
