// The embedded default: SIF-weighted GloVe word vectors (public/models/, built by
// `npm run build:model`), run by onnxruntime-web. Many texts share one session.run.

import { isMemoryError, MemoryError } from '../core/errors'
import type { Embedder } from './embedder'
import { SessionEmbedder } from './session-embedder'
import type { ModelCache } from './model-cache'
import { decodeText, loadManifest, readModelSource, type ModelSource } from './model-source'
import { createSession, getOrt, type ort } from './ort'
import { parseManifest, parseVocabulary, STATIC_MANIFEST_FILE, type StaticModelManifest, type StaticVocabulary } from './static-model-files'
import { vocabularyPieces, wordTokens } from './word-tokens'

export interface StaticEmbedderOptions {
  /** URL prefix of the model files; default `${BASE_URL}models/` (Vite's base URL, `/` elsewhere). */
  baseUrl?: string
  /** The manifest object, or where to read it; default `${baseUrl}cairn-glove-100d.json`. */
  manifest?: StaticModelManifest | ModelSource
  /** The model bytes or URL; default the manifest's file under `baseUrl`. */
  model?: ModelSource
  /** The vocabulary bytes or URL; default the manifest's file under `baseUrl`. */
  vocabulary?: ModelSource
  fetch?: typeof fetch
  /** `null` turns caching off; omitted means Cache Storage when the environment has it. */
  cache?: ModelCache | null
  /** Upper bound of batch × sequence length per session.run (memory vs. call overhead). */
  maxTokensPerRun?: number
}

interface BagOfWords {
  ids: number[]
  weights: number[]
}

const MAX_BATCH = 1024

export async function createStaticEmbedder(options: StaticEmbedderOptions = {}): Promise<Embedder> {
  const io = { fetch: options.fetch, cache: options.cache }
  const { manifest, baseUrl } = await loadManifest(options, STATIC_MANIFEST_FILE, parseManifest, 'static model manifest')
  const [model, vocabularyFile] = await Promise.all([
    readModelSource(options.model ?? baseUrl + manifest.model.file, { ...io, sha256: manifest.model.sha256, what: 'static model' }),
    readModelSource(options.vocabulary ?? baseUrl + manifest.vocabulary.file, { ...io, sha256: manifest.vocabulary.sha256, what: 'static model vocabulary' }),
  ])
  const vocabulary = parseVocabulary(decodeText(vocabularyFile.bytes))
  let session: ort.InferenceSession
  try {
    session = await createSession(model.bytes)
  } catch (err) {
    // the runtime's own failures (fetching it, starting it) already name their cause
    if (isMemoryError(err)) throw err
    throw new MemoryError('model_failed', `The static model could not be loaded by onnxruntime-web: ${(err as Error).message}. Regenerate it with \`npm run build:model\`.`, {})
  }
  return new StaticEmbedder(manifest, model.sha256, vocabulary, session, options.maxTokensPerRun ?? 32_768)
}

class StaticEmbedder extends SessionEmbedder {
  readonly id: string
  readonly dimensions: number
  private readonly pieces = new Map<string, number[]>()

  constructor(
    manifest: StaticModelManifest,
    readonly checksum: string,
    private readonly vocabulary: StaticVocabulary,
    session: ort.InferenceSession,
    private readonly maxTokensPerRun: number,
  ) {
    super(session)
    this.id = manifest.id
    this.dimensions = manifest.dimensions
  }

  protected async embedNow(texts: string[]): Promise<Float32Array[]> {
    const bags = texts.map((text) => this.bagOfWords(text))
    // texts with no known token keep the zero vector; a batch holds at most MAX_BATCH texts and maxTokensPerRun tokens padded
    const batchEnd = (order: readonly number[], start: number): number => {
      let end = start + 1
      while (end < order.length && end - start < MAX_BATCH && (end - start + 1) * bags[order[end]!]!.ids.length <= this.maxTokensPerRun) end++
      return end
    }
    return this.inLengthOrder(bags.map((bag) => bag.ids.length), batchEnd, (batch) => this.run(batch.map((i) => bags[i]!)))
  }

  private async run(bags: BagOfWords[]): Promise<Float32Array> {
    const ortApi = getOrt()
    const seq = Math.max(...bags.map((bag) => bag.ids.length))
    // int64 ids written through an int32 view (low word; ids are small and non-negative).
    const ids = new BigInt64Array(bags.length * seq)
    const low = new Int32Array(ids.buffer)
    const weights = new Float32Array(bags.length * seq)
    bags.forEach((bag, row) => {
      for (let t = 0; t < bag.ids.length; t++) {
        low[2 * (row * seq + t)] = bag.ids[t]!
        weights[row * seq + t] = bag.weights[t]!
      }
    })
    try {
      const result = await this.session.run({
        token_ids: new ortApi.Tensor('int64', ids, [bags.length, seq]),
        token_weights: new ortApi.Tensor('float32', weights, [bags.length, seq]),
      })
      return result.embeddings!.data as Float32Array
    } catch (err) {
      throw new MemoryError('model_failed', `The static model failed to embed: ${(err as Error).message}.`, {})
    }
  }

  /** Unique vocabulary ids of a text with their summed weights (a bag of words). */
  private bagOfWords(text: string): BagOfWords {
    const summed = new Map<number, number>()
    for (const word of wordTokens(text)) {
      for (const id of this.piecesOf(word)) summed.set(id, (summed.get(id) ?? 0) + this.vocabulary.weights[id]!)
    }
    return { ids: [...summed.keys()], weights: [...summed.values()] }
  }

  private piecesOf(word: string): number[] {
    let ids = this.pieces.get(word)
    if (!ids) {
      const known = this.vocabulary.ids
      ids = vocabularyPieces(word, (entry) => known.has(entry)).map((entry) => known.get(entry)!)
      if (this.pieces.size >= 200_000) this.pieces.clear()
      this.pieces.set(word, ids)
    }
    return ids
  }
}
