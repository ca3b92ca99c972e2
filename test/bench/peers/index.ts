// Cairn against its peers on one workload, in one process: latency of a query at several store
// sizes, the ratio peer / Cairn, and what each hands back for three sample queries.
import { defaultEmbedder } from '../../support/default-embedder'
import { percentile } from '../stats'
import { miniSearchSystem, oramaSystem } from './bare-indexes'
import { cairnSystem, type CairnSystem } from './cairn'
import { MCP_TOOL_LOAD_LIMIT, mcpMemorySystem, type McpSystem } from './mcp-memory'
import type { Answer, PeerSystem } from './system'
import { measureVectorFloor, type VectorFloor } from './vector-floor'
import { peerWorkload, type PeerQuery } from './workload'

export interface Row {
  system: string
  /** searchNodes / recall / search; `open` is mcp-memory's openNodes and Cairn's inspect. */
  operation: 'search' | 'open' | 'ping'
  entities: number
  p50Ms: number
  p95Ms: number
  loadMs: number
  queries: number
}

export interface SampleAnswer extends Answer {
  system: string
  entitiesInStore: number
  query: PeerQuery
}

export interface Ratio {
  system: string
  operation: Row['operation']
  entities: number
  /** peer p50 / Cairn BM25 p50, and the same against hybrid; >1 means the peer is slower. */
  vsBm25P50: number | null
  /** null where hybrid did not run at this size */
  vsHybridP50: number | null
}

export interface FloorRow extends VectorFloor {
  /** Cairn hybrid recall p50 at this size (embedding the query, BM25, vectors, graph) */
  hybridP50Ms: number
  /** hybridP50Ms / scanMs: how far a whole recall is from reading the vectors once */
  hybridOverFloor: number
}

export interface PeersBench {
  rows: Row[]
  ratios: Ratio[]
  samples: SampleAnswer[]
  /** the memory-bandwidth floor of a flat vector query, per size where hybrid ran */
  floors: FloorRow[]
  notes: string[]
}

async function timed(run: () => Promise<unknown>, times: number): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < times; i++) {
    const t = performance.now()
    await run()
    ms.push(performance.now() - t)
  }
  return ms
}

export interface PeersOptions {
  queries?: number
  /** Queries against mcp-memory, which re-reads its whole file per call, may be fewer
   *  (default: all up to 10k entities, 10 above, where each takes seconds). */
  mcpQueries?: number
  /** Queries against the bare indexes, whose sentence queries score nearly every document at 100k
   *  and take seconds each (default: all up to 10k entities, 40 above; the four kinds stay balanced). */
  bareQueries?: number
  /** Cairn hybrid runs up to this many entities (default: every size). */
  hybridMaxEntities?: number
  log?: (line: string) => void
}

export async function benchPeers(sizes: number[], options: PeersOptions = {}): Promise<PeersBench> {
  const embedder = await defaultEmbedder()
  const rows: Row[] = []
  const samples: SampleAnswer[] = []
  const notes = new Set<string>()
  const floors: FloorRow[] = []
  const log = options.log ?? (() => {})
  for (const n of sizes) {
    const w = peerWorkload(n, options.queries ?? 100)
    const hybrid = n <= (options.hybridMaxEntities ?? Infinity)
    if (!hybrid) notes.add(`cairn-hybrid not run at ${n} entities (hybridMaxEntities ${options.hybridMaxEntities})`)
    const systems: PeerSystem[] = [cairnSystem(), ...(hybrid ? [cairnSystem(embedder)] : []), mcpMemorySystem(), oramaSystem(), miniSearchSystem()]
    for (const system of systems) {
      const t0 = performance.now()
      await system.load(w)
      const loadMs = Math.round(performance.now() - t0)
      log(`${system.name} ${n}: loaded in ${loadMs} ms`)
      const isMcp = system.name === 'mcp-memory'
      const isBare = system.name === 'orama' || system.name === 'minisearch'
      const big = n > MCP_TOOL_LOAD_LIMIT
      const queries = isMcp
        ? w.queries.slice(0, options.mcpQueries ?? (big ? 10 : w.queries.length))
        : isBare
          ? w.queries.slice(0, options.bareQueries ?? (big ? 40 : w.queries.length))
          : w.queries
      if (queries.length < w.queries.length) notes.add(`${system.name} at ${n} entities: ${queries.length} of ${w.queries.length} queries (each takes long at this size)`)
      // collect what the previous system left behind (when run with --expose-gc), then warm up
      ;(globalThis as { gc?: () => void }).gc?.()
      for (const q of queries.slice(0, 10)) await system.search(q.text)
      let i = 0
      const search = await timed(() => system.search(queries[i++ % queries.length]!.text), queries.length)
      const row = (operation: Row['operation'], ms: number[]): Row => ({ system: system.name, operation, entities: n, p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95), loadMs, queries: ms.length })
      rows.push(row('search', search))
      if (system.open) {
        let k = 0
        const names = () => Array.from({ length: 5 }, (_, j) => w.entities[((k * 5 + j) * 7919) % n]!.name)
        const open = await timed(() => system.open!(names()).finally(() => k++), queries.length)
        rows.push(row('open', open))
      }
      if (system.name.startsWith('cairn') && !(system as CairnSystem).loadedThroughWrites) {
        notes.add(`cairn at ${n} entities: notes imported in one transaction (engine.importObservations, as a backup restore does), not written one by one; loadMs times that import`)
      }
      if (isMcp) {
        const mcp = system as McpSystem
        rows.push(row('ping', await timed(() => mcp.ping(), queries.length)))
        if (!mcp.loadedThroughTools) notes.add(`mcp-memory at ${n} entities: store written in its JSONL format, not through create_entities (too slow to load that way)`)
      }
      for (const query of w.samples) samples.push({ system: system.name, entitiesInStore: n, query, ...(await system.search(query.text)) })
      await system.close()
      if (system.name === 'cairn-hybrid') {
        const hybridP50Ms = rows.find((r) => r.system === 'cairn-hybrid' && r.operation === 'search' && r.entities === n)!.p50Ms
        const floor = measureVectorFloor(n, embedder.dimensions)
        floors.push({ ...floor, hybridP50Ms, hybridOverFloor: Math.round((hybridP50Ms / floor.scanMs) * 10) / 10 })
      }
    }
  }
  const ratios: Ratio[] = []
  for (const r of rows) {
    if (r.system.startsWith('cairn') || r.operation === 'ping') continue
    const base = (s: string): number | undefined => rows.find((b) => b.system === s && b.operation === r.operation && b.entities === r.entities)?.p50Ms ?? rows.find((b) => b.system === s && b.operation === 'search' && b.entities === r.entities)?.p50Ms
    const ratio = (b: number | undefined): number | null => (b ? Math.round((r.p50Ms / b) * 100) / 100 : null)
    ratios.push({ system: r.system, operation: r.operation, entities: r.entities, vsBm25P50: ratio(base('cairn-bm25')), vsHybridP50: ratio(base('cairn-hybrid')) })
  }
  notes.add('mcp-memory runs as its own process over stdio (importing its module starts the server); its ping row is the transport floor included in its search/open figures')
  notes.add('cairn open = inspect() of each of 5 names; mcp-memory open = one openNodes call with 5 names')
  notes.add('orama and minisearch: top 10 of name/type/description; cairn recall: default limits, matches plus 1-hop neighbors; mcp-memory: every substring match and every relation touching one')
  notes.add('vector floor: one flat query reads entities × dimensions × 4 bytes at least; scanMs reads that many Float32 once with a tight loop in this process')
  return { rows, ratios, samples, floors, notes: [...notes] }
}
