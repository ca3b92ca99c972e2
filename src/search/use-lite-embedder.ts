// An optional embedder: Universal Sentence Encoder lite (512 dimensions, 2 transformer layers,
// SentencePiece pieces) converted to ONNX by `npm run build:use-model`, run by onnxruntime-web.
// Its files come from URLs (cached) or bytes the caller holds, as the other models' do.

import { isMemoryError, MemoryError } from '../core/errors'
import type { Embedder } from './embedder'
import { SessionEmbedder } from './session-embedder'
import type { ModelCache } from './model-cache'
import { isModelSource, loadManifest, parseJson, readModelSource, type ModelSource } from './model-source'
import { createSession, getOrt, type ort } from './ort'
import { parseUseLiteManifest, USE_LITE_MANIFEST_FILE, type UseLiteManifest } from './use-lite-files'
import { parseUsePieces, UseTokenizer, type UsePieces } from './use-tokenizer'

export interface UseLiteEmbedderOptions {
  /** URL prefix of the built files; default `${BASE_URL}models/` (Vite's base URL, `/` elsewhere). */
  baseUrl?: string
  /** The manifest object, or where to read it; default `${baseUrl}cairn-use-lite.json`. */
  manifest?: UseLiteManifest | ModelSource
  /** The `.onnx` bytes or URL; default the manifest's file under `baseUrl`. */
  model?: ModelSource
  /** The vocabulary (`vocab.json`) bytes or URL, or its parsed pieces; default the manifest's file. */
  vocabulary?: ModelSource | UsePieces
  fetch?: typeof fetch
  /** `null` turns caching off; omitted means Cache Storage when the environment has it. */
  cache?: ModelCache | null
  /** Texts per session.run (default 32): attention costs grow with batch × length². */
  maxBatch?: number
}

export async function createUseLiteEmbedder(options: UseLiteEmbedderOptions = {}): Promise<Embedder> {
  const io = { fetch: options.fetch, cache: options.cache }
  const { manifest, baseUrl } = await loadManifest(options, USE_LITE_MANIFEST_FILE, parseUseLiteManifest, 'USE-lite manifest')
  const vocabularySource = options.vocabulary ?? baseUrl + manifest.vocabulary.file
  const [model, pieces] = await Promise.all([
    readModelSource(options.model ?? baseUrl + manifest.model.file, { ...io, sha256: manifest.model.sha256, what: 'USE-lite model' }),
    isModelSource(vocabularySource)
      ? readModelSource(vocabularySource, { ...io, sha256: manifest.vocabulary.sha256, what: 'USE-lite vocabulary' }).then(({ bytes }) => parseJson(bytes, 'USE-lite vocabulary'))
      : Promise.resolve(vocabularySource),
  ])
  const tokenizer = new UseTokenizer(parseUsePieces(pieces))
  let session: ort.InferenceSession
  try {
    session = await createSession(model.bytes)
  } catch (err) {
    // the runtime's own failures (fetching it, starting it) already name their cause
    if (isMemoryError(err)) throw err
    throw new MemoryError('model_failed', `The USE-lite model could not be loaded by onnxruntime-web: ${(err as Error).message}. Rebuild it with \`npm run build:use-model\`.`, {})
  }
  for (const name of ['token_ids', 'mask']) {
    if (!session.inputNames.includes(name)) throw new MemoryError('model_failed', `The USE-lite model has no \`${name}\` input; rebuild it with \`npm run build:use-model\`.`, {})
  }
  const embedder = new UseLiteEmbedder(manifest, model.sha256, tokenizer, session, options.maxBatch ?? 32)
  await embedder.probe()
  return embedder
}

/** Whitespace runs become one space: the encoder reads only spaces as word breaks. */
function prepare(text: string): string {
  return text.replace(/\s+/gu, ' ').trim()
}

class UseLiteEmbedder extends SessionEmbedder {
  readonly id: string
  readonly dimensions: number
  private readonly maxTokens: number

  constructor(
    manifest: UseLiteManifest,
    readonly checksum: string,
    private readonly tokenizer: UseTokenizer,
    session: ort.InferenceSession,
    private readonly maxBatch: number,
  ) {
    super(session)
    this.id = manifest.id
    this.dimensions = manifest.dimensions
    this.maxTokens = manifest.maxTokens
  }

  /** One run proves model, vocabulary and manifest fit together. */
  async probe(): Promise<void> {
    const out = await this.run([this.tokenizer.encode('probe')])
    if (out.length !== this.dimensions) {
      throw new MemoryError('model_failed', `The USE-lite model yields ${out.length} dimensions where its manifest says ${this.dimensions}; rebuild it with \`npm run build:use-model\`.`, {})
    }
  }

  protected async embedNow(texts: string[]): Promise<Float32Array[]> {
    // the model reads its first maxTokens tokens, as the TF.js model clips them
    const sequences = texts.map((text) => this.tokenizer.encode(prepare(text)).slice(0, this.maxTokens))
    // texts with nothing in them keep the zero vector; a batch holds at most maxBatch texts
    const batchEnd = (order: readonly number[], start: number) => Math.min(order.length, start + this.maxBatch)
    return this.inLengthOrder(sequences.map((s) => s.length), batchEnd, (batch) => this.run(batch.map((i) => sequences[i]!)))
  }

  private async run(sequences: number[][]): Promise<Float32Array> {
    const api = getOrt()
    const seq = Math.max(1, ...sequences.map((s) => s.length))
    // int64 ids written through an int32 view (low word; ids are small and non-negative)
    const ids = new BigInt64Array(sequences.length * seq)
    const low = new Int32Array(ids.buffer)
    const mask = new Float32Array(sequences.length * seq)
    sequences.forEach((sequence, row) => {
      sequence.forEach((id, t) => {
        low[2 * (row * seq + t)] = id
        mask[row * seq + t] = 1
      })
    })
    try {
      const result = await this.session.run({
        token_ids: new api.Tensor('int64', ids, [sequences.length, seq]),
        mask: new api.Tensor('float32', mask, [sequences.length, seq]),
      })
      return result.embeddings!.data as Float32Array
    } catch (err) {
      throw new MemoryError('model_failed', `The USE-lite model failed to embed: ${(err as Error).message}.`, {})
    }
  }
}
