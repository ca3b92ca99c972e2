// `npm run eval -- --locomo <path>`: evidence recall on LoCoMo conversations. Each conversation
// becomes one memory filled through the public API; every question is one recall. Cairn BM25,
// Cairn hybrid and a plain BM25 search over the notes' text (MiniSearch) are scored side by
// side per category. Prints a table and writes bench/results/eval-locomo.json.

import { mkdirSync, writeFileSync } from 'node:fs'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import MiniSearch from 'minisearch'
import { BM25_ONLY, createDefaultEmbedder, createMemory, type Embedder } from '../src/index'
import { dialogIds, evidenceScores, readLocomo, type LocomoConversation } from './eval/locomo'
import { mean } from './eval/metrics'

const K = 10
const CATEGORIES = [1, 2, 3, 4]
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' }

interface Sample { category: number; r5: number; r10: number; ndcg10: number; ms: number }
type Ranker = (question: string) => Promise<string[][]>

/** A memory of one conversation; recall returns the sources of its observations in order. */
async function cairnRanker(conv: LocomoConversation, embedder: Embedder | undefined): Promise<{ rank: Ranker; close: () => Promise<void> }> {
  const memory = await createMemory({
    name: conv.sampleId, indexedDB: new IDBFactory(), IDBKeyRange,
    ...(embedder ? { embedder } : { retrieval: { embedder: BM25_ONLY } }),
  })
  const agent = await memory.connect({ agent: 'locomo-eval' })
  for (const write of conv.writes) await agent.write(write)
  const sourceOf = new Map<string, string>()
  const rank: Ranker = async (question) => {
    const result = await agent.recall({ query: question, limits: { observations: K } })
    const out: string[][] = []
    for (const o of result.observations) {
      let source = sourceOf.get(o.slug)
      if (source === undefined) {
        source = (await agent.getObservation(o.slug)).source ?? ''
        sourceOf.set(o.slug, source)
      }
      out.push(dialogIds(source))
    }
    return out
  }
  return { rank, close: () => memory.close() }
}

/** What a user might pick instead: BM25 over each note's title and content, top K. */
function plainRanker(conv: LocomoConversation): { rank: Ranker; close: () => Promise<void> } {
  const search = new MiniSearch<{ id: number; title: string; content: string }>({ fields: ['title', 'content'] })
  search.addAll(conv.writes.map((w, id) => ({ id, title: w.title, content: w.content })))
  const rank: Ranker = async (question) => search.search(question).slice(0, K).map((hit) => dialogIds(conv.writes[hit.id as number]!.source))
  return { rank, close: async () => undefined }
}

async function score(conv: LocomoConversation, rank: Ranker): Promise<Sample[]> {
  const samples: Sample[] = []
  for (const q of conv.questions) {
    const t = performance.now()
    const sources = await rank(q.question)
    const ms = performance.now() - t
    const at10 = evidenceScores(sources, q.evidence, 10)
    samples.push({ category: q.category, r5: evidenceScores(sources, q.evidence, 5).recall, r10: at10.recall, ndcg10: at10.ndcg, ms })
  }
  return samples
}

const round = (x: number) => Math.round(x * 1000) / 1000

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

export async function runLocomo(path: string): Promise<void> {
  const started = performance.now()
  const set = readLocomo(path)
  // the public API's default embedder: the memory is made exactly as an application makes one
  const embedder = await createDefaultEmbedder()
  const systems: Array<{ name: string; make: (c: LocomoConversation) => Promise<{ rank: Ranker; close: () => Promise<void> }> }> = [
    { name: 'plain BM25 (MiniSearch)', make: async (c) => plainRanker(c) },
    { name: 'Cairn BM25', make: (c) => cairnRanker(c, undefined) },
    { name: `Cairn hybrid (${embedder.id})`, make: (c) => cairnRanker(c, embedder) },
  ]
  const questions = set.conversations.reduce((n, c) => n + c.questions.length, 0)
  const writes = set.conversations.reduce((n, c) => n + c.writes.length, 0)
  console.log(`LoCoMo ${set.conversations.map((c) => c.sampleId).join(', ')}: ${writes} writes, ${questions} questions (categories ${CATEGORIES.join(', ')})`)
  const bySystem: Record<string, Sample[]> = {}
  for (const system of systems) {
    const samples: Sample[] = []
    for (const conv of set.conversations) {
      const ranker = await system.make(conv)
      samples.push(...(await score(conv, ranker.rank)))
      await ranker.close()
    }
    bySystem[system.name] = samples
  }
  const rows: Array<Record<string, string | number>> = []
  for (const [system, samples] of Object.entries(bySystem)) {
    for (const category of [0, ...CATEGORIES]) {
      const s = category ? samples.filter((x) => x.category === category) : samples
      rows.push({
        system, category: category ? `${category} ${CATEGORY_NAMES[category]}` : 'all', questions: s.length,
        'recall@5': round(mean(s.map((x) => x.r5))), 'recall@10': round(mean(s.map((x) => x.r10))), 'nDCG@10': round(mean(s.map((x) => x.ndcg10))),
        'p50 ms': round(percentile(s.map((x) => x.ms), 50)), 'p95 ms': round(percentile(s.map((x) => x.ms), 95)),
      })
    }
  }
  console.log(`\nEvidence recall on LoCoMo (top ${K} observations per question)`)
  console.table(rows)
  const plain = bySystem[systems[0]!.name]!
  const ratios: Record<string, Record<string, number>> = {}
  for (const system of systems.slice(1)) {
    const mine = bySystem[system.name]!
    ratios[system.name] = {}
    for (const category of [0, ...CATEGORIES]) {
      const pick = (s: Sample[]) => (category ? s.filter((x) => x.category === category) : s)
      ratios[system.name]![category ? String(category) : 'all'] = round(mean(pick(mine).map((x) => x.r10)) / (mean(pick(plain).map((x) => x.r10)) || 1))
    }
  }
  console.log('recall@10 over plain BM25, by category:')
  console.table(ratios)
  mkdirSync('bench/results', { recursive: true })
  const result = { at: new Date().toISOString(), dataset: { source: set.source, conversations: set.conversations.map((c) => c.sampleId), writes, questions }, embedder: { id: embedder.id, dimensions: embedder.dimensions }, k: K, rows, recallAt10OverPlain: ratios, seconds: round((performance.now() - started) / 1000) }
  writeFileSync('bench/results/eval-locomo.json', JSON.stringify(result, null, 2))
  console.log(`wrote bench/results/eval-locomo.json in ${result.seconds} s`)
}
