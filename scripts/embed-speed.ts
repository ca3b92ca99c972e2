// `npx tsx scripts/embed-speed.ts --locomo <path> [--embedder glove|use-lite] [--use-model DIR]`:
// how fast an embedder turns notes and queries into vectors, onnxruntime-web wasm on one thread.
// Notes are the LoCoMo file's note texts; queries its questions. Measures notes/s in batches (an
// import) and one at a time (a write), the vocabulary words the note index embeds besides, and a
// query's latency. Wall and CPU time are both given: CPU time is steadier on a shared machine.

import { readFileSync } from 'node:fs'
import { ENGLISH_STOP_WORDS } from '../src/search/stop-words'
import { wordTokens } from '../src/search/word-tokens'
import { embedderChoice, loadEmbedder } from './eval/embedders'
import type { LocomoSet } from './eval/locomo'

const STOP = new Set(ENGLISH_STOP_WORDS)
/** The words the note index embeds besides each note (its rule, restated for measuring). */
const contentWords = (text: string) => [...new Set(wordTokens(text).filter((w) => !STOP.has(w) && /[\p{L}\p{N}]/u.test(w)))]

const round = (x: number, digits = 1) => Number(x.toFixed(digits))

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** Wall and CPU seconds of `work`. */
async function timed(work: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage()
  const wall = performance.now()
  await work()
  const used = process.cpuUsage(cpu)
  return { wall: (performance.now() - wall) / 1000, cpu: (used.user + used.system) / 1e6 }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--locomo')
  const path = process.argv[at + 1]
  if (at < 0 || !path) throw new Error('--locomo takes the path of a LoCoMo file, e.g. ../shared/data/locomo-dev-turns.json')
  const set = JSON.parse(readFileSync(path, 'utf8')) as LocomoSet
  const notes = set.conversations.flatMap((c) => c.writes.map((w) => w.content))
  const questions = set.conversations.flatMap((c) => c.questions.map((q) => q.question)).slice(0, 300)
  const words = [...new Set(notes.flatMap((n) => contentWords(n)))]
  const choice = embedderChoice(process.argv)
  const loading = performance.now()
  const embedder = await loadEmbedder(choice)
  const loadMs = performance.now() - loading
  await embedder.embed(notes.slice(0, 64)) // warm-up

  const batch = 64
  const imported = await timed(async () => {
    for (let i = 0; i < notes.length; i += batch) await embedder.embed(notes.slice(i, i + batch))
  })
  const singles = notes.slice(0, 300)
  const written = await timed(async () => {
    for (const note of singles) await embedder.embed([note])
  })
  const vocabulary = await timed(async () => {
    for (let i = 0; i < words.length; i += 512) await embedder.embed(words.slice(i, i + 512))
  })
  const latencies: number[] = []
  for (const q of questions) {
    const t = performance.now()
    // a recall embeds the query and its content words in one call
    await embedder.embed([q, ...contentWords(q)])
    latencies.push(performance.now() - t)
  }
  await embedder.dispose?.()

  const notesPerS = notes.length / imported.wall
  const wordsPerNote = words.length / notes.length
  const result = {
    embedder: embedder.id,
    notes: notes.length,
    'chars/note': round(notes.reduce((n, t) => n + t.length, 0) / notes.length),
    'load ms': Math.round(loadMs),
    'notes/s batched': Math.round(notesPerS),
    'notes/s batched (CPU)': Math.round(notes.length / imported.cpu),
    'notes/s one by one': Math.round(singles.length / written.wall),
    'new words/s': Math.round(words.length / vocabulary.wall),
    'query p50 ms': round(percentile(latencies, 50)),
    'query p95 ms': round(percentile(latencies, 95)),
    // 10k notes: their texts batched, plus the new words the note index embeds (as many per note
    // as here, an overestimate since a larger memory repeats more of its words)
    '10k notes s (est.)': round(10_000 / notesPerS + (10_000 * wordsPerNote) / (words.length / vocabulary.wall)),
    '10k notes CPU s (est.)': round((10_000 / notes.length) * imported.cpu + ((10_000 * wordsPerNote) / words.length) * vocabulary.cpu),
  }
  console.log(`${path}: ${notes.length} notes, ${words.length} distinct content words, ${questions.length} questions`)
  console.table([result])
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
