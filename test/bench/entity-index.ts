// Entity index benchmark: insert throughput, search latency (bm25, vector, hybrid) at several
// sizes, and snapshot/restore time, on WordNet noun synsets (cycled past 82k) with the shipped
// static embedder (100-d) when public/models has it, else seeded random word vectors.
import { existsSync, readFileSync } from 'node:fs'
import type { Embedder } from '../../src/search/embedder'
import { createEntityIndex, restoreEntityIndex, type EntityDoc, type SearchMode } from '../../src/search/entity-index'
import { createStaticEmbedder } from '../../src/search/static-embedder'
import { readNounSynsets } from '../../scripts/eval/wordnet'
import { percentile } from './stats'

export interface EntityIndexBenchRow {
  entities: number
  vectorRows: number
  /** Bytes one vector query scans: rows x dimensions x 4. */
  vectorBytesScanned: number
  insertPerSecond: number
  bm25P50Ms: number
  bm25P95Ms: number
  vectorP50Ms: number
  hybridP50Ms: number
  hybridP95Ms: number
  snapshotMs?: number
  cloneMs?: number
  restoreMs?: number
}

export interface EntityIndexBench {
  embedder: string
  dimensions: number
  queries: number
  rows: EntityIndexBenchRow[]
}

const MODELS = 'public/models/'

async function benchEmbedder(): Promise<Embedder> {
  if (existsSync(MODELS + 'cairn-glove-100d.json')) {
    const file = (name: string) => new Uint8Array(readFileSync(MODELS + name))
    return createStaticEmbedder({ manifest: file('cairn-glove-100d.json'), model: file('cairn-glove-100d.onnx'), vocabulary: file('cairn-glove-100d.vocab.txt'), cache: null })
  }
  return randomWordEmbedder(100)
}

/** Sum of a seeded random vector per word, normalized: costs like a real static embedder. */
function randomWordEmbedder(dimensions: number): Embedder {
  const cache = new Map<string, Float32Array>()
  const wordVector = (word: string) => {
    let v = cache.get(word)
    if (!v) {
      let s = 0
      for (let i = 0; i < word.length; i++) s = Math.imul(s ^ word.charCodeAt(i), 16777619) >>> 0
      v = new Float32Array(dimensions).map(() => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) - 0.5)
      cache.set(word, v)
    }
    return v
  }
  return {
    id: `bench-random-${dimensions}d`,
    dimensions,
    checksum: '',
    async embed(texts) {
      return texts.map((t) => {
        const out = new Float32Array(dimensions)
        for (const w of t.toLowerCase().match(/\p{L}+/gu) ?? []) wordVector(w).forEach((x, i) => (out[i]! += x))
        const norm = Math.hypot(...out)
        return norm > 0 ? out.map((x) => x / norm) : out
      })
    },
  }
}

function docsFor(n: number): { docs: EntityDoc[]; queries: string[] } {
  const synsets = readNounSynsets()
  const docs: EntityDoc[] = []
  for (let i = 0; i < n; i++) {
    const s = synsets[i % synsets.length]!
    const round = Math.floor(i / synsets.length)
    docs.push({ key: `${s.lemmas[0]!.toLowerCase()}#${s.offset}${round ? `/${round}` : ''}`, name: s.lemmas[0]!, type: s.lexname, description: s.definition, queries: s.examples.slice(0, 2) })
  }
  // a mix of one-word names, synonyms and full example sentences
  const queries: string[] = []
  for (let i = 0; queries.length < 200; i += 37) {
    const s = synsets[(i * 7919) % synsets.length]!
    queries.push(i % 3 === 0 && s.examples[0] ? s.examples[0] : s.lemmas[s.lemmas.length - 1]!)
  }
  return { docs, queries }
}

async function latencies(run: (q: string) => Promise<unknown>, queries: string[]): Promise<number[]> {
  for (const q of queries.slice(0, 20)) await run(q) // warm up
  const ms: number[] = []
  for (const q of queries) {
    const t = performance.now()
    await run(q)
    ms.push(performance.now() - t)
  }
  return ms
}

export async function benchEntityIndex(sizes: number[] = [1_000, 10_000, 100_000], snapshotAt = 10_000): Promise<EntityIndexBench> {
  const embedder = await benchEmbedder()
  const { docs: all, queries } = docsFor(Math.max(...sizes))
  const rows: EntityIndexBenchRow[] = []
  for (const n of sizes) {
    const docs = all.slice(0, n)
    const index = await createEntityIndex({ embedder })
    const t0 = performance.now()
    for (let i = 0; i < docs.length; i += 1000) await index.upsert(docs.slice(i, i + 1000))
    const insertMs = performance.now() - t0
    const search = (mode: SearchMode) => (q: string) => index.search(q, 10, mode)
    const bm25 = await latencies(search('bm25'), queries)
    const vector = await latencies(search('vector'), queries)
    const hybrid = await latencies(search('hybrid'), queries)
    const vectorRows = docs.reduce((sum, d) => sum + 1 + d.queries.length, 0)
    const row: EntityIndexBenchRow = {
      entities: n,
      vectorRows,
      vectorBytesScanned: vectorRows * embedder.dimensions * 4,
      insertPerSecond: Math.round((n / insertMs) * 1000),
      bm25P50Ms: percentile(bm25, 50),
      bm25P95Ms: percentile(bm25, 95),
      vectorP50Ms: percentile(vector, 50),
      hybridP50Ms: percentile(hybrid, 50),
      hybridP95Ms: percentile(hybrid, 95),
    }
    if (n === snapshotAt) {
      let t = performance.now()
      const snap = await index.snapshot()
      row.snapshotMs = Math.round(performance.now() - t)
      t = performance.now()
      const copy = structuredClone(snap) // what IndexedDB does on put and get
      row.cloneMs = Math.round(performance.now() - t)
      t = performance.now()
      const restored = await restoreEntityIndex(copy, { embedder })
      row.restoreMs = Math.round(performance.now() - t)
      if (restored.size() !== index.size()) throw new Error('restored index lost entities')
    }
    rows.push(row)
  }
  return { embedder: embedder.id, dimensions: embedder.dimensions, queries: queries.length, rows }
}
