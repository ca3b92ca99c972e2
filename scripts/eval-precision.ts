// `npm run eval -- --precision <path>`: does recall say "nothing matches", and does it find a
// note that names no entity? Each LoCoMo conversation (the file beside the precision set, or
// `--locomo <path>`) becomes one memory, the set's unlinked notes are added to it, then every
// off-topic query and every unlinked note's query is asked. Cairn BM25, Cairn hybrid and plain
// BM25 over the notes' text (MiniSearch, English stop words left out) side by side; the
// conversation's own questions show how often a real question is judged none. Prints a table
// and writes bench/results/eval-precision.json.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import MiniSearch from 'minisearch'
import { BM25_ONLY, createDefaultEmbedder, createMemory, type Embedder, type RecallResult } from '../src/index'
import { ENGLISH_STOP_WORDS } from '../src/search/stop-words'
import { readLocomo, type LocomoConversation } from './eval/locomo'

const K = 10

interface PrecisionSet {
  offTopic: string[]
  unlinked: Array<{ title: string; content: string; query: string }>
}

/** What one system answered to one query. */
interface Answer {
  /** Any entity came back as matched. */
  entity: boolean
  /** Any note came back. */
  note: boolean
  /** Cairn's verdict; plain BM25 has none. */
  match?: RecallResult['match']
  /** Titles of the notes, in order. */
  titles: string[]
}

interface System {
  name: string
  ask(query: string): Promise<Answer>
  close(): Promise<void>
}

async function cairn(conv: LocomoConversation, set: PrecisionSet, embedder: Embedder | undefined): Promise<System> {
  const memory = await createMemory({
    name: conv.sampleId, indexedDB: new IDBFactory(), IDBKeyRange,
    ...(embedder ? { embedder } : { retrieval: { embedder: BM25_ONLY } }),
  })
  const agent = await memory.connect({ agent: 'precision-eval' })
  for (const write of conv.writes) await agent.write(write)
  for (const note of set.unlinked) await agent.write({ title: note.title, content: note.content })
  return {
    name: embedder ? `Cairn hybrid (${embedder.id})` : 'Cairn BM25',
    async ask(query) {
      const r = await agent.recall({ query, limits: { observations: K } })
      return { entity: r.entities.some((e) => e.via === 'match'), note: r.observations.length > 0, match: r.match, titles: r.observations.map((o) => o.title) }
    },
    close: () => memory.close(),
  }
}

const STOP = new Set(ENGLISH_STOP_WORDS)

/** What a user might pick instead: BM25 over each note's title and content, stop words left out. */
function plain(conv: LocomoConversation, set: PrecisionSet): System {
  const notes = [...conv.writes.map((w) => ({ title: w.title, content: w.content })), ...set.unlinked.map((u) => ({ title: u.title, content: u.content }))]
  const search = new MiniSearch<{ id: number; title: string; content: string }>({
    fields: ['title', 'content'],
    processTerm: (term) => (STOP.has(term.toLowerCase()) ? null : term.toLowerCase()),
  })
  search.addAll(notes.map((n, id) => ({ id, ...n })))
  return {
    name: 'plain BM25 (MiniSearch)',
    async ask(query) {
      const hits = search.search(query).slice(0, K)
      return { entity: hits.length > 0, note: hits.length > 0, titles: hits.map((h) => notes[h.id as number]!.title) }
    },
    close: async () => undefined,
  }
}

const pct = (n: number, of: number) => Math.round((1000 * n) / Math.max(1, of)) / 10

export async function runPrecision(path: string, locomoPath?: string): Promise<void> {
  const started = performance.now()
  const set = JSON.parse(readFileSync(path, 'utf8')) as PrecisionSet
  if (!Array.isArray(set?.offTopic) || !Array.isArray(set?.unlinked)) throw new Error(`${path} is not a precision set (offTopic and unlinked lists)`)
  const locomo = readLocomo(locomoPath ?? join(dirname(path), 'locomo-dev.json'))
  const embedder = await createDefaultEmbedder()
  const makers: Array<(c: LocomoConversation) => Promise<System>> = [async (c) => plain(c, set), (c) => cairn(c, set, undefined), (c) => cairn(c, set, embedder)]
  const rows: Array<Record<string, string | number>> = []
  const misses: Record<string, string[]> = {}
  for (const make of makers) {
    let name = ''
    const tally = { offTopic: 0, strong: 0, entity: 0, note: 0, unlinked: 0, found: 0, questions: 0, qStrong: 0, qWeak: 0, qNone: 0 }
    for (const conv of locomo.conversations) {
      const system = await make(conv)
      name = system.name
      for (const query of set.offTopic) {
        const a = await system.ask(query)
        tally.offTopic++
        if (a.match === 'strong') tally.strong++
        if (a.entity) tally.entity++
        if (a.note) tally.note++
      }
      for (const note of set.unlinked) {
        const a = await system.ask(note.query)
        tally.unlinked++
        if (a.titles.includes(note.title)) tally.found++
        else (misses[name] ??= []).push(`${conv.sampleId}: ${note.query}`)
      }
      for (const q of conv.questions) {
        const a = await system.ask(q.question)
        tally.questions++
        if (a.match === 'strong') tally.qStrong++
        else if (a.match === 'weak') tally.qWeak++
        else if (a.match === 'none') tally.qNone++
      }
      await system.close()
    }
    const cairnOnly = name.startsWith('Cairn')
    rows.push({
      system: name,
      'off-topic answered strong %': cairnOnly ? pct(tally.strong, tally.offTopic) : '-',
      'off-topic with a matched entity %': pct(tally.entity, tally.offTopic),
      'off-topic with notes %': pct(tally.note, tally.offTopic),
      'unlinked found in top 10 %': pct(tally.found, tally.unlinked),
      'questions strong / weak / none %': cairnOnly ? `${pct(tally.qStrong, tally.questions)} / ${pct(tally.qWeak, tally.questions)} / ${pct(tally.qNone, tally.questions)}` : '-',
    })
  }
  console.log(`Precision: ${set.offTopic.length} off-topic queries and ${set.unlinked.length} unlinked notes in each of ${locomo.conversations.length} LoCoMo memories (top ${K})`)
  console.table(rows)
  for (const [system, list] of Object.entries(misses)) console.log(`${system}: unlinked notes missed: ${list.length}${list.length ? ` (${list.slice(0, 8).join('; ')}${list.length > 8 ? '; …' : ''})` : ''}`)
  mkdirSync('bench/results', { recursive: true })
  const result = { at: new Date().toISOString(), k: K, embedder: { id: embedder.id }, conversations: locomo.conversations.map((c) => c.sampleId), rows, seconds: Math.round(performance.now() - started) / 1000 }
  writeFileSync('bench/results/eval-precision.json', JSON.stringify(result, null, 2))
  console.log(`wrote bench/results/eval-precision.json in ${result.seconds} s`)
}
