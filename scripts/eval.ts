// `npm run eval`: retrieval quality of the entity index on WordNet 3.1 nouns (see
// scripts/eval/task.ts). BM25, vectors and hybrid, hybrid weights tuned on the dev split and
// reported on the held-out test split. Prints a table and writes bench/results/eval.json.
// With `--locomo <path>`, the conversational task instead (scripts/eval-locomo.ts). `--embedder
// use-lite` runs either with USE-lite instead of GloVe (scripts/eval/embedders.ts).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createEntityIndex, restoreEntityIndex, type EntityIndex, type SearchMode } from '../src/search/entity-index'
import type { Embedder } from '../src/search/embedder'
import { createStaticEmbedder } from '../src/search/static-embedder'
import { mean, ndcgAtK, pairedBootstrap, recallAtK } from './eval/metrics'
import { buildTask, DEFAULT_TASK, type EvalQuery } from './eval/task'
import { readNounSynsets, wordnetVersion } from './eval/wordnet'
import { embedderChoice, loadUseLite } from './eval/embedders'
import { runLocomo } from './eval-locomo'
import { runPrecision } from './eval-precision'

function requirePath(path: string | undefined, flag = '--locomo'): string {
  if (!path || path.startsWith('--')) throw new Error(flag === '--locomo' ? '--locomo takes the path of a LoCoMo writes-and-questions file, e.g. ../shared/data/locomo-dev.json' : `${flag} takes the path of a precision set, e.g. ../shared/data/precision-dev.json`)
  return path
}

const K = 10
const MODELS = 'public/models/'
const VECTOR_WEIGHTS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]

interface Scores { recall: number; ndcg: number; perQuery: number[] }
type Row = { split: string; system: string; kind: string; queries: number; [metric: string]: string | number }

async function loadEmbedder(): Promise<Embedder | undefined> {
  const file = (name: string) => new Uint8Array(readFileSync(MODELS + name))
  if (!existsSync(MODELS + 'cairn-glove-100d.json')) return undefined
  const manifest = JSON.parse(readFileSync(MODELS + 'cairn-glove-100d.json', 'utf8')) as { model: { file: string }; vocabulary: { file: string } }
  return createStaticEmbedder({ manifest: file('cairn-glove-100d.json'), model: file(manifest.model.file), vocabulary: file(manifest.vocabulary.file), cache: null })
}

async function evaluate(index: EntityIndex, queries: EvalQuery[], mode: SearchMode): Promise<Scores> {
  const recall: number[] = []
  const ndcg: number[] = []
  for (const q of queries) {
    const ranked = (await index.search(q.text, K, mode)).map((h) => h.key)
    const relevant = new Set(q.relevant)
    recall.push(recallAtK(ranked, relevant, K))
    ndcg.push(ndcgAtK(ranked, relevant, K))
  }
  return { recall: mean(recall), ndcg: mean(ndcg), perQuery: ndcg }
}

const round = (x: number) => Math.round(x * 1000) / 1000
const seconds = (since: number) => Math.round(performance.now() - since) / 1000

async function main(): Promise<void> {
  const started = performance.now()
  const task = buildTask(readNounSynsets())
  const kinds = ['all', 'synonym', 'usage'] as const
  const subset = (qs: EvalQuery[], kind: (typeof kinds)[number]) => (kind === 'all' ? qs : qs.filter((q) => q.kind === kind))
  console.log(`WordNet ${wordnetVersion().database} nouns: ${task.docs.length} entities, ${task.dev.length} dev and ${task.test.length} test queries`)

  const choice = embedderChoice(process.argv)
  const embedder = choice.name === 'use-lite' ? await loadUseLite(choice.useModelDir) : await loadEmbedder()
  if (!embedder) console.log(`no model under ${MODELS}: BM25 only (run \`npm run build:model\`)`)
  const rows: Row[] = []
  const record = (split: string, system: string, kind: string, queries: number, s: Scores) => rows.push({ split, system, kind, queries, [`recall@${K}`]: round(s.recall), [`nDCG@${K}`]: round(s.ndcg) })

  // stemming only changes BM25: compare it on dev without vectors
  const timings: Record<string, number> = {}
  const stemmingDev: Record<string, number> = {}
  for (const stemming of [false, true]) {
    const t = performance.now()
    const bm25 = await createEntityIndex({ stemming })
    await bm25.upsert(task.docs)
    timings[`buildBm25${stemming ? 'Stemmed' : ''}S`] = seconds(t)
    const s = await evaluate(bm25, task.dev, 'bm25')
    stemmingDev[stemming ? 'stemmed' : 'unstemmed'] = round(s.ndcg)
    record('dev', `bm25 (${stemming ? 'stemmed' : 'unstemmed'})`, 'all', task.dev.length, s)
  }
  const stemming = stemmingDev.stemmed! >= stemmingDev.unstemmed!

  let best: { vector: number; ndcg: number } | undefined
  let index: EntityIndex
  if (embedder) {
    const t = performance.now()
    index = await createEntityIndex({ embedder, stemming })
    await index.upsert(task.docs)
    timings.buildHybridS = seconds(t)
    const snapshot = await index.snapshot()
    const tuning: { vector: number; ndcg: number }[] = []
    for (const vector of VECTOR_WEIGHTS) {
      const tuned = await restoreEntityIndex(snapshot, { embedder, stemming, weights: { text: 1 - vector, vector } })
      const s = await evaluate(tuned, task.dev, 'hybrid')
      tuning.push({ vector, ndcg: round(s.ndcg) })
      if (!best || s.ndcg > best.ndcg) best = { vector, ndcg: s.ndcg }
    }
    console.log('\nDev split: hybrid nDCG@10 by vector weight')
    console.table(tuning)
    index = await restoreEntityIndex(snapshot, { embedder, stemming, weights: { text: 1 - best!.vector, vector: best!.vector } })
  } else {
    index = await createEntityIndex({ stemming })
    await index.upsert(task.docs)
  }

  const systems: { name: string; mode: SearchMode }[] = [{ name: 'bm25', mode: 'bm25' }]
  if (embedder) systems.push({ name: 'vector', mode: 'vector' }, { name: `hybrid (vector weight ${best!.vector})`, mode: 'hybrid' })
  const perQuery: Record<string, Record<string, number[]>> = {}
  for (const kind of kinds) {
    const queries = subset(task.test, kind)
    perQuery[kind] = {}
    for (const system of systems) {
      const s = await evaluate(index, queries, system.mode)
      perQuery[kind]![system.mode] = s.perQuery
      record('test', system.name, kind, queries.length, s)
    }
  }
  console.log(`\nRetrieval quality (WordNet ${wordnetVersion().database} nouns, top ${K})`)
  console.table(rows)

  const gain: Record<string, unknown> = {}
  if (embedder) {
    for (const kind of kinds) {
      const a = perQuery[kind]!.bm25!
      const b = perQuery[kind]!.hybrid!
      const delta = mean(b) - mean(a)
      const ci = pairedBootstrap(a, b)
      gain[kind] = { bm25: round(mean(a)), hybrid: round(mean(b)), absolute: round(delta), relative: round(delta / mean(a)), ci95: { low: round(ci.low), high: round(ci.high) } }
    }
    console.log('Hybrid minus BM25, test nDCG@10 (95% paired bootstrap interval):')
    console.table(gain)
  }

  const result = {
    at: new Date().toISOString(),
    dataset: { name: 'WordNet noun synsets', version: wordnetVersion(), license: 'WordNet 3.0 license (Princeton University; BSD-style, free use with notice)', task: DEFAULT_TASK, entities: task.docs.length, devQueries: task.dev.length, testQueries: task.test.length },
    embedder: embedder ? { id: embedder.id, dimensions: embedder.dimensions, checksum: embedder.checksum } : null,
    k: K,
    stemming: { chosen: stemming, devNdcg: stemmingDev },
    hybridWeights: best ? { text: round(1 - best.vector), vector: best.vector, devNdcg: round(best.ndcg) } : null,
    rows,
    hybridOverBm25: gain,
    timings: { ...timings, totalS: seconds(started) },
  }
  mkdirSync('bench/results', { recursive: true })
  const out = `bench/results/eval${choice.name === 'glove' ? '' : `-${choice.name}`}.json`
  writeFileSync(out, JSON.stringify(result, null, 2))
  console.log(`wrote ${out} in ${result.timings.totalS} s`)
}

const locomoAt = process.argv.indexOf('--locomo')
const precisionAt = process.argv.indexOf('--precision')
const task =
  precisionAt >= 0 ? runPrecision(requirePath(process.argv[precisionAt + 1], '--precision'), locomoAt >= 0 ? requirePath(process.argv[locomoAt + 1]) : undefined)
  : locomoAt >= 0 ? runLocomo(requirePath(process.argv[locomoAt + 1]), { pooled: process.argv.includes('--pooled'), ablate: process.argv.includes('--ablate'), grid: process.argv.includes('--grid'), embedder: embedderChoice(process.argv) })
  : main()
task.catch((err) => {
  console.error(err)
  process.exit(1)
})
