// A tiny USE-shaped network for tests: random weights, both layer kinds (one that widens 8 -> 16
// with a residual projection, one that keeps 16), a hand-made vocabulary, and its manifest.

import { createHash } from 'node:crypto'
import { buildUseLiteGraph, type Matrix, type UseLiteWeights } from '../../scripts/use-lite-graph'
import type { UseLiteManifest } from '../../src/search/use-lite-files'
import type { UsePieces } from '../../src/search/use-tokenizer'
import { mulberry32 } from '../support/mulberry32'

// an unknown character scores 0 (the reference rule), so the bare word start costs more than a word
export const PIECES: UsePieces = [
  ['<unk>', 0], ['<s>', 0], ['</s>', 0], ['x1', 0], ['x2', 0], ['x3', 0],
  ['\u2581the', -2], ['\u2581', -6], ['\u2581cat', -3], ['\u2581dog', -3], ['s', -3], ['\u2581sat', -3], ['\u2581on', -2], ['\u2581mat', -4], ['.', -2],
]
export const MAX_TOKENS = 6

/** Uniform in [-0.5, 0.5), the same on every run. */
function prng(seed: number): () => number {
  const next = mulberry32(seed)
  return () => next() - 0.5
}

export function tinyWeights(): UseLiteWeights {
  const random = prng(11)
  const fill = (n: number, scale = 1) => Float32Array.from({ length: n }, () => random() * scale)
  // kernels scaled by fan-in so that the final tanh stays away from saturation
  const m = (rows: number, cols: number): Matrix => ({ data: fill(rows * cols, 1 / Math.sqrt(rows)), rows, cols })
  const dense = (rows: number, cols: number) => ({ kernel: m(rows, cols), bias: fill(cols, 0.2) })
  const norm = (n: number) => ({ scale: Float32Array.from(fill(n, 0.4), (x) => 1 + x), bias: fill(n, 0.2) })
  const layer = (input: number, width: number) => ({
    norm1: norm(input), qkv: dense(input, 3 * input), heads: 2, output: dense(input, width),
    ...(input !== width ? { residual: dense(input, width) } : {}),
    norm2: norm(width), ffn1: dense(width, 2 * width), ffn2: dense(2 * width, width),
  })
  return {
    embeddings: { data: fill(PIECES.length * 8, 2), rows: PIECES.length, cols: 8 }, timescales: Float32Array.from([1, 0.3, 0.1, 0.01]), maxTokens: MAX_TOKENS,
    layers: [layer(8, 16), layer(16, 16)], final: { kernel: m(16, 16), bias: fill(16, 0.05) }, epsilon: 1e-6,
  }
}

export const modelBytes = buildUseLiteGraph(tinyWeights(), 'tiny test network')
export const vocabularyBytes = new TextEncoder().encode(JSON.stringify(PIECES))
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
export const manifest: UseLiteManifest = {
  id: 'use-lite-tiny@1', dimensions: 16, maxTokens: MAX_TOKENS,
  model: { file: 'm.onnx', sha256: sha(modelBytes), bytes: modelBytes.length },
  vocabulary: { file: 'v.json', sha256: sha(vocabularyBytes), size: PIECES.length },
  source: {},
}
