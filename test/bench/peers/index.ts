// Cairn against its peers on one workload, in one process: latency of a query at several store
// sizes, the ratio peer / Cairn, and what each hands back for three sample queries.
import { defaultEmbedder } from '../../support/default-embedder'
import { percentile } from '../stats'
import { miniSearchSystem, oramaSystem } from './bare-indexes'
import { cairnSystem } from './cairn'
import { mcpMemorySystem, type McpSystem } from './mcp-memory'
import type { Answer, PeerSystem } from './system'
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
  vsBm25P50: number
  vsHybridP50: number
}

export interface PeersBench {
  rows: Row[]
  ratios: Ratio[]
  samples: SampleAnswer[]
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
  /** Queries against mcp-memory, which re-reads its whole file per call, may be fewer. */
  mcpQueries?: number
  log?: (line: string) => void
}

export async function benchPeers(sizes: number[], options: PeersOptions = {}): Promise<PeersBench> {
  const embedder = await defaultEmbedder()
  const rows: Row[] = []
  const samples: SampleAnswer[] = []
  const notes = new Set<string>()
  const log = options.log ?? (() => {})
  for (const n of sizes) {
    const w = peerWorkload(n, options.queries ?? 100)
    const systems: PeerSystem[] = [cairnSystem(), cairnSystem(embedder), mcpMemorySystem(), oramaSystem(), miniSearchSystem()]
    for (const system of systems) {
      const t0 = performance.now()
      await system.load(w)
      const loadMs = Math.round(performance.now() - t0)
      log(`${system.name} ${n}: loaded in ${loadMs} ms`)
      const isMcp = system.name === 'mcp-memory'
      const queries = isMcp ? w.queries.slice(0, options.mcpQueries ?? w.queries.length) : w.queries
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
      if (isMcp) {
        const mcp = system as McpSystem
        rows.push(row('ping', await timed(() => mcp.ping(), queries.length)))
        if (!mcp.loadedThroughTools) notes.add(`mcp-memory at ${n} entities: store written in its JSONL format, not through create_entities (too slow to load that way)`)
      }
      for (const query of w.samples) samples.push({ system: system.name, entitiesInStore: n, query, ...(await system.search(query.text)) })
      await system.close()
    }
  }
  const ratios: Ratio[] = []
  for (const r of rows) {
    if (r.system.startsWith('cairn') || r.operation === 'ping') continue
    const base = (s: string) => rows.find((b) => b.system === s && b.operation === r.operation && b.entities === r.entities)?.p50Ms ?? rows.find((b) => b.system === s && b.operation === 'search' && b.entities === r.entities)!.p50Ms
    const ratio = (b: number) => Math.round((r.p50Ms / b) * 100) / 100
    ratios.push({ system: r.system, operation: r.operation, entities: r.entities, vsBm25P50: ratio(base('cairn-bm25')), vsHybridP50: ratio(base('cairn-hybrid')) })
  }
  notes.add('mcp-memory runs as its own process over stdio (importing its module starts the server); its ping row is the transport floor included in its search/open figures')
  notes.add('cairn open = inspect() of each of 5 names; mcp-memory open = one openNodes call with 5 names')
  notes.add('orama and minisearch: top 10 of name/type/description; cairn recall: default limits, matches plus 1-hop neighbors; mcp-memory: every substring match and every relation touching one')
  return { rows, ratios, samples, notes: [...notes] }
}
