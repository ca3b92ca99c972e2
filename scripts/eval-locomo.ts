// `npm run eval -- --locomo <path>`: evidence recall on LoCoMo conversations (the facts file or the
// dialog-turns file, same shape). Each conversation becomes one memory filled through the public
// API (`--pooled`: all of them in one memory); every question is one recall. Cairn BM25, Cairn
// hybrid and a plain BM25 search over the notes' text (MiniSearch) are scored side by side per
// category: recall@5/10/50, nDCG@10 and latency. `--ablate` turns each signal of the note score
// off and on (hybrid); `--grid` searches their weights; `--embedder use-lite` ranks hybrid with USE-lite.
// Writes bench/results/eval-locomo.json (eval-locomo-use-lite.json with USE-lite).

import { mkdirSync, writeFileSync } from 'node:fs'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import MiniSearch from 'minisearch'
import { BM25_ONLY, createMemory, type Embedder } from '../src/index'
import { engineOf } from '../src/internals'
import { DEFAULT_TUNING, MAX_LIMITS, type RecallTuning } from '../src/core/recall'
import { loadEmbedder, type EmbedderChoice } from './eval/embedders'
import { dialogIds, evidenceScores, readLocomo, type LocomoConversation, type LocomoSet } from './eval/locomo'
import { mean } from './eval/metrics'

const K = 50
const CATEGORIES = [1, 2, 3, 4]
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' }

interface Sample { category: number; r5: number; r10: number; r50: number; ndcg10: number; ms: number }
type Ranker = (question: string, tuning?: Readonly<RecallTuning>) => Promise<string[][]>
interface System { rank: Ranker; close: () => Promise<void>; writeMs?: number }

/** A memory of one conversation; recall returns the sources of its observations in order. */
async function cairnRanker(conv: LocomoConversation, embedder: Embedder | undefined): Promise<System> {
  const memory = await createMemory({
    name: conv.sampleId, indexedDB: new IDBFactory(), IDBKeyRange,
    ...(embedder ? { embedder } : { retrieval: { embedder: BM25_ONLY } }),
  })
  const agent = await memory.connect({ agent: 'locomo-eval' })
  const writing = performance.now()
  for (const write of conv.writes) await agent.write(write)
  const writeMs = performance.now() - writing
  const engine = engineOf(memory)
  const sourceOf = new Map<string, string>()
  const rank: Ranker = async (question, tuning = DEFAULT_TUNING) => {
    engine.recallTuning = tuning
    const result = await agent.recall({ query: question, limits: { observations: K, bytes: MAX_LIMITS.bytes } })
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
  return { rank, close: () => memory.close(), writeMs }
}

/** What a user might pick instead: BM25 over each note's title and content, top K. */
function plainRanker(conv: LocomoConversation): System {
  const search = new MiniSearch<{ id: number; title: string; content: string }>({ fields: ['title', 'content'] })
  search.addAll(conv.writes.map((w, id) => ({ id, title: w.title, content: w.content })))
  const rank: Ranker = async (question) => search.search(question).slice(0, K).map((hit) => dialogIds(conv.writes[hit.id as number]!.source))
  return { rank, close: async () => undefined }
}

/** All conversations as one memory: dialog ids are prefixed by their conversation, so evidence stays its own. */
export function pooled(set: LocomoSet): LocomoConversation {
  const tag = (c: LocomoConversation, ids: string) => dialogIds(ids).map((id) => `${c.sampleId}/${id}`).join(',')
  return {
    sampleId: 'pooled',
    speakers: set.conversations.flatMap((c) => c.speakers),
    writes: set.conversations.flatMap((c) => c.writes.map((w) => ({ ...w, source: tag(c, w.source) }))),
    questions: set.conversations.flatMap((c) => c.questions.map((q) => ({ ...q, evidence: q.evidence.map((id) => `${c.sampleId}/${id}`) }))),
  }
}

async function score(conv: LocomoConversation, rank: Ranker, tuning?: Readonly<RecallTuning>): Promise<Sample[]> {
  const samples: Sample[] = []
  for (const q of conv.questions) {
    const t = performance.now()
    const sources = await rank(q.question, tuning)
    const ms = performance.now() - t
    const at10 = evidenceScores(sources, q.evidence, 10)
    samples.push({ category: q.category, r5: evidenceScores(sources, q.evidence, 5).recall, r10: at10.recall, r50: evidenceScores(sources, q.evidence, 50).recall, ndcg10: at10.ndcg, ms })
  }
  return samples
}

const round = (x: number) => Math.round(x * 1000) / 1000

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

function rowsOf(name: string, samples: Sample[]): Array<Record<string, string | number>> {
  return [0, ...CATEGORIES].map((category) => {
    const s = category ? samples.filter((x) => x.category === category) : samples
    return {
      system: name, category: category ? `${category} ${CATEGORY_NAMES[category]}` : 'all', questions: s.length,
      'recall@5': round(mean(s.map((x) => x.r5))), 'recall@10': round(mean(s.map((x) => x.r10))), 'recall@50': round(mean(s.map((x) => x.r50))), 'nDCG@10': round(mean(s.map((x) => x.ndcg10))),
      'p50 ms': round(percentile(s.map((x) => x.ms), 50)), 'p95 ms': round(percentile(s.map((x) => x.ms), 95)),
    }
  })
}

/**
 * The signals added to the note score, each a weight of the tuning that `off` turns off. A signal
 * the default leaves off gives `on`: the weight it was measured at.
 */
const SIGNALS: Array<{ name: string; off: Partial<RecallTuning>; on?: Partial<RecallTuning> }> = [
  { name: 'session (same day as a hit)', off: { sessionShare: 0 }, on: { sessionShare: 0.08 } },
  { name: 'near in time (self-anchored)', off: { nearShare: 0 } },
  { name: 'graph (activation from named entities)', off: { graphShare: 0 } },
  { name: 'time words (days, last week, before/after)', off: { timeWords: 0 } },
  { name: 'feedback (likeness to the best notes)', off: { feedbackShare: 0 }, on: { feedbackShare: 0.2, feedbackNotes: 3 } },
  { name: 'direct notes (matched, backing no recalled entity)', off: { directNotes: 0 }, on: { directNotes: 1 } },
  { name: 'reply (written right after a hit)', off: { replyShare: 0 } },
]

/** A signal's weights when on: the default's, or those it was measured at when the default leaves it off. */
function onOf(s: (typeof SIGNALS)[number]): Partial<RecallTuning> {
  const on: Partial<RecallTuning> = { ...s.on }
  for (const k of Object.keys(s.off) as Array<keyof RecallTuning>) if (!(k in on)) on[k] = DEFAULT_TUNING[k]
  return on
}

/** Hybrid recall with each signal off, and each alone, beside all on: one table, recall@10 and @50 per category. */
async function ablate(convs: LocomoConversation[], embedder: Embedder): Promise<Array<Record<string, string | number>>> {
  const none: RecallTuning = { ...DEFAULT_TUNING }
  for (const s of SIGNALS) Object.assign(none, s.off)
  const isOn = (s: (typeof SIGNALS)[number]) => Object.keys(s.off).some((k) => DEFAULT_TUNING[k as keyof RecallTuning] !== s.off[k as keyof RecallTuning])
  const variants: Array<{ name: string; tuning: RecallTuning }> = [
    { name: 'none of them', tuning: none },
    ...SIGNALS.map((s) => ({ name: `only ${s.name}`, tuning: { ...none, ...onOf(s) } })),
    ...SIGNALS.map((s) => (isOn(s) ? { name: `all but ${s.name}`, tuning: { ...DEFAULT_TUNING, ...s.off } } : { name: `default with ${s.name}`, tuning: { ...DEFAULT_TUNING, ...onOf(s) } })),
    { name: 'default', tuning: { ...DEFAULT_TUNING } },
  ]
  const samples = new Map(variants.map((v) => [v.name, [] as Sample[]]))
  for (const conv of convs) {
    const system = await cairnRanker(conv, embedder)
    // a pass not counted warms the engine up; then each question is asked under every variant in
    // turn, so their latencies meet the same machine load
    await score(conv, system.rank, variants[0]!.tuning)
    for (const q of conv.questions) {
      for (const v of variants) samples.get(v.name)!.push(...(await score({ ...conv, questions: [q] }, system.rank, v.tuning)))
    }
    await system.close()
  }
  const rows: Array<Record<string, string | number>> = []
  for (const v of variants) {
    const s = samples.get(v.name)!
    const row: Record<string, string | number> = { variant: v.name }
    for (const category of [0, ...CATEGORIES]) {
      const c = category ? s.filter((x) => x.category === category) : s
      const label = category ? String(category) : 'all'
      row[`${label} @10`] = round(mean(c.map((x) => x.r10)))
      row[`${label} @50`] = round(mean(c.map((x) => x.r50)))
    }
    row['p50 ms'] = round(percentile(s.map((x) => x.ms), 50))
    rows.push(row)
  }
  console.log('\nAblation, Cairn hybrid: recall@10 and @50 per category (all, 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)')
  console.table(rows)
  return rows
}

/** Every combination of `axes`' values. */
function combinations(axes: Record<string, number[]>): Array<Partial<RecallTuning>> {
  let out: Array<Partial<RecallTuning>> = [{}]
  for (const [key, values] of Object.entries(axes)) out = out.flatMap((t) => values.map((v) => ({ ...t, [key]: v })))
  return out
}

/** Weights of the note score searched on this set: the best by recall@10 over all questions. */
async function grid(convs: LocomoConversation[], embedder: Embedder): Promise<{ table: Array<Record<string, number>>; byConversation: Record<string, unknown> }> {
  const axes: Record<string, number[]> = JSON.parse(process.env.CAIRN_GRID ?? 'null') ?? {
    sessionShare: [0, 0.05, 0.1, 0.2], nearShare: [0, 0.05, 0.1], nearHalfLifeDays: [3, 14], graphShare: [0, 0.5, 1], entityShare: [0.1, 0.2, 0.3],
  }
  const points = combinations(axes)
  const samples = points.map(() => [] as Sample[])
  // per conversation too, for the leave-one-out figure
  const byConv = convs.map(() => points.map(() => [] as Sample[]))
  for (const [c, conv] of convs.entries()) {
    const system = await cairnRanker(conv, embedder)
    for (let i = 0; i < points.length; i++) {
      const s = await score(conv, system.rank, { ...DEFAULT_TUNING, ...points[i] })
      samples[i]!.push(...s)
      byConv[c]![i]!.push(...s)
    }
    await system.close()
  }
  if (convs.length > 1) {
    // each conversation scored at the weighting the other conversations chose: what the grid's
    // best would be worth on a conversation it never saw
    const held: Sample[] = []
    const picks: string[] = []
    for (let c = 0; c < convs.length; c++) {
      let best = 0
      let bestScore = -1
      for (let i = 0; i < points.length; i++) {
        const others = byConv.flatMap((perPoint, o) => (o === c ? [] : perPoint[i]!))
        const r = mean(others.map((x) => x.r10))
        if (r > bestScore + 1e-9) {
          bestScore = r
          best = i
        }
      }
      held.push(...byConv[c]![best]!)
      picks.push(`${convs[c]!.sampleId}: ${JSON.stringify(points[best])}`)
    }
    const loo: Record<string, number> = { 'recall@10': round(mean(held.map((x) => x.r10))), 'recall@50': round(mean(held.map((x) => x.r50))) }
    for (const c of CATEGORIES) loo[`${c} @10`] = round(mean(held.filter((x) => x.category === c).map((x) => x.r10)))
    console.log('\nLeave one conversation out (each scored at the weighting chosen on the others):')
    console.log(picks.join('\n'))
    console.table([loo])
  }
  const table = points
    .map((p, i) => {
      const row: Record<string, number> = { ...(p as Record<string, number>), 'recall@10': round(mean(samples[i]!.map((x) => x.r10))) }
      for (const c of CATEGORIES) row[`${c} @10`] = round(mean(samples[i]!.filter((x) => x.category === c).map((x) => x.r10)))
      return row
    })
    .sort((a, b) => b['recall@10']! - a['recall@10']!)
  console.log(`\nGrid over ${points.length} weightings (Cairn hybrid), best first:`)
  console.table(table.slice(0, 15))
  // recall@10 of every weighting on every conversation: enough to pick weights on both dev files at once, held out
  const byConversation = {
    points,
    conversations: convs.map((c, i) => ({ sampleId: c.sampleId, questions: c.questions.length, 'recall@10': byConv[i]!.map((s) => mean(s.map((x) => x.r10))) })),
  }
  return { table, byConversation }
}

export async function runLocomo(path: string, options: { pooled?: boolean; ablate?: boolean; grid?: boolean; embedder?: { name: EmbedderChoice; useModelDir: string } } = {}): Promise<void> {
  const started = performance.now()
  const set = readLocomo(path)
  const convs = options.pooled ? [pooled(set)] : set.conversations
  // the public API's default embedder unless `--embedder` names another: the memory is made
  // exactly as an application makes one
  const choice = options.embedder ?? { name: 'glove', useModelDir: '' }
  const embedder = await loadEmbedder(choice)
  const questions = convs.reduce((n, c) => n + c.questions.length, 0)
  const writes = convs.reduce((n, c) => n + c.writes.length, 0)
  console.log(`LoCoMo ${set.conversations.map((c) => c.sampleId).join(', ')}${options.pooled ? ' (pooled in one memory)' : ''}: ${writes} writes, ${questions} questions (categories ${CATEGORIES.join(', ')})`)
  const result: Record<string, unknown> = { at: new Date().toISOString(), dataset: { source: set.source, path, pooled: Boolean(options.pooled), conversations: set.conversations.map((c) => c.sampleId), writes, questions }, embedder: { id: embedder.id, dimensions: embedder.dimensions }, k: K, tuning: DEFAULT_TUNING }
  if (options.ablate) result.ablation = await ablate(convs, embedder)
  if (options.grid) {
    const { table, byConversation } = await grid(convs, embedder)
    result.grid = table.slice(0, 50)
    result.gridByConversation = byConversation
  }
  if (!options.ablate && !options.grid) {
    const systems: Array<{ name: string; make: (c: LocomoConversation) => Promise<System> }> = [
      { name: 'plain BM25 (MiniSearch)', make: async (c) => plainRanker(c) },
      { name: 'Cairn BM25', make: (c) => cairnRanker(c, undefined) },
      { name: `Cairn hybrid (${embedder.id})`, make: (c) => cairnRanker(c, embedder) },
    ]
    const bySystem: Record<string, Sample[]> = {}
    const writesPerSecond: Record<string, number> = {}
    for (const system of systems) {
      const samples: Sample[] = []
      let writeMs = 0
      for (const conv of convs) {
        const ranker = await system.make(conv)
        writeMs += ranker.writeMs ?? 0
        samples.push(...(await score(conv, ranker.rank)))
        await ranker.close()
      }
      bySystem[system.name] = samples
      if (writeMs) writesPerSecond[system.name] = Math.round(writes / (writeMs / 1000))
    }
    const rows = Object.entries(bySystem).flatMap(([name, samples]) => rowsOf(name, samples))
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
    console.log('writes per second through the public API (note, entities, indexes):')
    console.table(writesPerSecond)
    result.rows = rows
    result.writesPerSecond = writesPerSecond
    result.recallAt10OverPlain = ratios
  }
  result.seconds = round((performance.now() - started) / 1000)
  mkdirSync('bench/results', { recursive: true })
  const out = `bench/results/eval-locomo${choice.name === 'glove' ? '' : `-${choice.name}`}.json`
  writeFileSync(out, JSON.stringify(result, null, 2))
  console.log(`wrote ${out} in ${result.seconds} s`)
}
