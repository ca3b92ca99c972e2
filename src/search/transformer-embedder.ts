// Sentence-transformers ONNX exports (all-MiniLM-L6-v2 shape): BERT inputs -> last_hidden_state
// -> mean over attended tokens -> L2 normalize. Model from a URL (cached) or a user-chosen file.

import { isMemoryError, MemoryError } from '../core/errors'
import type { Embedder } from './embedder'
import { SessionEmbedder } from './session-embedder'
import type { ModelCache } from './model-cache'
import { isModelSource, parseJson, readModelSource, type ModelSource } from './model-source'
import { createSession, getOrt, type ort } from './ort'
import { TransformerTokenizer, type EncodedBatch } from './transformer-tokenizer'

export interface TransformerEmbedderOptions {
  /** Stable id frozen into a memory's retrieval config, e.g. `all-MiniLM-L6-v2@1`. */
  id: string
  /** The `.onnx` export: a URL, or a File/Blob/ArrayBuffer/Uint8Array the user chose. */
  model: ModelSource
  /** The `tokenizer.json`: a source like `model`, or its parsed JSON. */
  tokenizer: ModelSource | Record<string, unknown>
  /** Parsed `tokenizer_config.json`, when the export has one. */
  tokenizerConfig?: Record<string, unknown>
  /** Expected sha256 (hex) of the model bytes; a mismatch is `model_failed`. */
  sha256?: string
  fetch?: typeof fetch
  /** `null` turns caching off; omitted means Cache Storage when the environment has it. */
  cache?: ModelCache | null
  /** Tokens per text, special tokens included (default 256). */
  maxLength?: number
  /** Texts per session.run (default 32). */
  maxBatch?: number
}

export async function createTransformerEmbedder(options: TransformerEmbedderOptions): Promise<Embedder> {
  const io = { fetch: options.fetch, cache: options.cache }
  const [model, tokenizerJson] = await Promise.all([
    readModelSource(options.model, { ...io, sha256: options.sha256, what: 'transformer model' }),
    isModelSource(options.tokenizer)
      ? readModelSource(options.tokenizer, { ...io, what: 'tokenizer.json' }).then(({ bytes }) => parseJson(bytes, 'tokenizer.json'))
      : Promise.resolve(options.tokenizer),
  ])
  const tokenizer = new TransformerTokenizer(tokenizerJson, options.tokenizerConfig, options.maxLength ?? 256)
  let session: ort.InferenceSession
  try {
    session = await createSession(model.bytes)
  } catch (err) {
    // the runtime's own failures (fetching it, starting it) already name their cause
    if (isMemoryError(err)) throw err
    throw new MemoryError('model_failed', `The transformer model could not be loaded by onnxruntime-web: ${(err as Error).message}. Use an ONNX export of a sentence-transformers model.`, {})
  }
  const embedder = new TransformerEmbedder(options.id, model.sha256, tokenizer, session, options.maxBatch ?? 32)
  await embedder.probe()
  return embedder
}

class TransformerEmbedder extends SessionEmbedder {
  dimensions = 0
  private readonly outputName: string

  constructor(
    readonly id: string,
    readonly checksum: string,
    private readonly tokenizer: TransformerTokenizer,
    session: ort.InferenceSession,
    private readonly maxBatch: number,
  ) {
    super(session)
    const names = session.outputNames
    this.outputName = names.includes('last_hidden_state') ? 'last_hidden_state' : names[0]!
    for (const name of ['input_ids', 'attention_mask']) {
      if (!session.inputNames.includes(name)) {
        throw new MemoryError('model_failed', `The transformer model has no \`${name}\` input (it has ${session.inputNames.join(', ')}); use a BERT-style sentence-transformers export.`, {})
      }
    }
  }

  /** Learns the hidden size from one run, which also proves model and tokenizer fit together. */
  async probe(): Promise<void> {
    const [vector] = await this.runBatch([this.tokenizer.ids('probe')])
    this.dimensions = vector!.length
  }

  protected async embedNow(texts: string[]): Promise<Float32Array[]> {
    const sequences = texts.map((text) => this.tokenizer.ids(text))
    const order = sequences.map((_, i) => i).sort((a, b) => sequences[a]!.length - sequences[b]!.length)
    const out: Float32Array[] = new Array(texts.length)
    for (let start = 0; start < order.length; start += this.maxBatch) {
      const chunk = order.slice(start, start + this.maxBatch)
      const vectors = await this.runBatch(chunk.map((i) => sequences[i]!))
      chunk.forEach((i, row) => (out[i] = vectors[row]!))
    }
    return out
  }

  private async runBatch(sequences: number[][]): Promise<Float32Array[]> {
    const encoded = this.tokenizer.pad(sequences)
    let output: ort.Tensor
    try {
      const result = await this.session.run(this.feeds(encoded))
      output = result[this.outputName] as ort.Tensor
    } catch (err) {
      throw new MemoryError('model_failed', `The transformer model failed to embed: ${(err as Error).message}.`, {})
    }
    return meanPoolNormalized(output, encoded)
  }

  private feeds(encoded: EncodedBatch): Record<string, ort.Tensor> {
    const { Tensor } = getOrt()
    const shape = [encoded.batch, encoded.seq]
    const all: Record<string, ort.Tensor> = {
      input_ids: new Tensor('int64', encoded.inputIds, shape),
      attention_mask: new Tensor('int64', encoded.attentionMask, shape),
      token_type_ids: new Tensor('int64', encoded.tokenTypeIds, shape),
    }
    // Some exports drop token_type_ids; feed only what the graph declares.
    return Object.fromEntries(this.session.inputNames.filter((name) => name in all).map((name) => [name, all[name]!]))
  }
}

/** Mean of the attended token states ([batch, seq, hidden]), then unit length; pooled outputs are only normalized. */
function meanPoolNormalized(output: ort.Tensor, encoded: EncodedBatch): Float32Array[] {
  const data = output.data as Float32Array
  const dims = output.dims
  const vectors: Float32Array[] = []
  if (dims.length === 2) {
    const hidden = dims[1]!
    for (let row = 0; row < encoded.batch; row++) vectors.push(normalize(Float32Array.from(data.subarray(row * hidden, (row + 1) * hidden))))
    return vectors
  }
  const [, seq, hidden] = dims as [number, number, number]
  for (let row = 0; row < encoded.batch; row++) {
    const sum = new Float64Array(hidden)
    let count = 0
    for (let t = 0; t < seq; t++) {
      if (!encoded.mask[row * encoded.seq + t]) continue
      count++
      const base = (row * seq + t) * hidden
      for (let h = 0; h < hidden; h++) sum[h]! += data[base + h]!
    }
    const mean = new Float32Array(hidden)
    for (let h = 0; h < hidden; h++) mean[h] = count ? sum[h]! / count : 0
    vectors.push(normalize(mean))
  }
  return vectors
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0
  for (const x of vector) norm += x * x
  norm = Math.sqrt(norm)
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm
  return vector
}
