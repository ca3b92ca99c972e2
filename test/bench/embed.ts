// Static embedder throughput on short texts (entity-description sized), from the shipped model files.
// Run alone with `npx tsx test/bench/embed.ts`; `npm run bench` may call `benchEmbed()`.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStaticEmbedder } from '../../src/search/static-embedder'
import { mulberry32 } from '../support/mulberry32'

const MODELS = join(fileURLToPath(new URL('../../public/models/', import.meta.url)))

export interface EmbedBench {
  texts: number
  batchSize: number
  wordsPerText: number
  loadMs: number
  seconds: number
  textsPerSecond: number
  /** One text per embed() call, as a single write would do. */
  singleTextsPerSecond: number
}

/** Deterministic pseudo-sentences of 4–16 common words (mulberry32 PRNG). */
function shortTexts(count: number, words: string[]): string[] {
  const random = mulberry32(42)
  return Array.from({ length: count }, () => {
    const n = 4 + Math.floor(random() * 13)
    return Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ') + '.'
  })
}

export async function benchEmbed(count = 20_000, batchSize = 500): Promise<EmbedBench> {
  const started = performance.now()
  const embedder = await createStaticEmbedder({
    manifest: readFileSync(join(MODELS, 'cairn-glove-100d.json')),
    model: readFileSync(join(MODELS, 'cairn-glove-100d.onnx')),
    vocabulary: readFileSync(join(MODELS, 'cairn-glove-100d.vocab.txt')),
    cache: null,
  })
  const loadMs = performance.now() - started
  const vocabulary = readFileSync(join(MODELS, 'cairn-glove-100d.vocab.txt'), 'utf8')
  const words = vocabulary.split('\n', 20_000).map((line) => line.slice(0, line.indexOf('\t')))
  const texts = shortTexts(count, words)
  await embedder.embed(texts.slice(0, batchSize)) // warm-up
  const t0 = performance.now()
  for (let i = 0; i < texts.length; i += batchSize) await embedder.embed(texts.slice(i, i + batchSize))
  const seconds = (performance.now() - t0) / 1000
  const singles = texts.slice(0, 2_000)
  const t1 = performance.now()
  for (const text of singles) await embedder.embed([text])
  const singleSeconds = (performance.now() - t1) / 1000
  await embedder.dispose?.()
  const wordsPerText = texts.reduce((n, text) => n + text.split(' ').length, 0) / texts.length
  return { texts: count, batchSize, wordsPerText: Number(wordsPerText.toFixed(1)), loadMs: Math.round(loadMs), seconds: Number(seconds.toFixed(3)), textsPerSecond: Math.round(count / seconds), singleTextsPerSecond: Math.round(singles.length / singleSeconds) }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchEmbed().then((result) => console.table([result]))
}
