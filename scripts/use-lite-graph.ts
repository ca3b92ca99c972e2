// The ONNX graph of Universal Sentence Encoder lite, rebuilt from its weights: dense padded token
// ids and a mask in, unit-length sentence vectors out. Used by `npm run build:use-model` (real
// weights) and by tests (tiny random weights).
//
// The network, as the published TF.js graph computes it for the positions a text fills:
//   h   = 2 * embedding[id] + timing(position)           (the graph adds the embedding twice)
//   per layer: a = attention(LN(h)) + residual(h);  h = FFN(LN(a)) + a
//     residual is a dense projection where the layer widens (256 -> 512), else h itself
//   out = l2normalize(tanh(mean over filled positions(h) W + b))
// Padded positions take no part: attention masks them as keys (bias -1e9) and pooling skips them.

import onnxProto from 'onnx-proto'

const { onnx } = onnxProto

export interface Matrix {
  data: Float32Array
  rows: number
  cols: number
}

export interface UseLiteLayer {
  norm1: { scale: Float32Array; bias: Float32Array }
  /** [input, 3 * attention width]: query, key and value side by side. */
  qkv: { kernel: Matrix; bias: Float32Array }
  heads: number
  output: { kernel: Matrix; bias: Float32Array }
  /** Only where the layer changes width. */
  residual?: { kernel: Matrix; bias: Float32Array }
  norm2: { scale: Float32Array; bias: Float32Array }
  ffn1: { kernel: Matrix; bias: Float32Array }
  ffn2: { kernel: Matrix; bias: Float32Array }
}

export interface UseLiteWeights {
  embeddings: Matrix
  /** Inverse timescales of the sinusoid position signal, half the embedding width. */
  timescales: Float32Array
  /** Longest input the model reads (the timing table's length). */
  maxTokens: number
  layers: UseLiteLayer[]
  final: { kernel: Matrix; bias: Float32Array }
  /** Layer-norm epsilon. */
  epsilon: number
}

function raw(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength))
}

/** sin(p * t) then cos(p * t) per position p, each product rounded to float32 as TF computes it. */
export function timingTable(timescales: Float32Array, positions: number): Float32Array {
  const half = timescales.length
  const table = new Float32Array(positions * half * 2)
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(Math.fround(p) * timescales[i]!)
      table[p * half * 2 + i] = Math.sin(angle)
      table[p * half * 2 + half + i] = Math.cos(angle)
    }
  }
  return table
}

export function buildUseLiteGraph(weights: UseLiteWeights, docString = 'Universal Sentence Encoder lite'): Uint8Array {
  const { DataType } = onnx.TensorProto
  const { INT, INTS, FLOAT } = onnx.AttributeProto.AttributeType
  const initializer: object[] = []
  const nodes: object[] = []
  const f32 = (name: string, dims: number[], values: Float32Array) => {
    initializer.push({ name, dims, dataType: DataType.FLOAT, rawData: raw(values) })
    return name
  }
  const i64 = (name: string, values: number[]) => {
    initializer.push({ name, dims: [values.length], dataType: DataType.INT64, int64Data: values })
    return name
  }
  const op = (opType: string, input: string[], output: string, attribute: object[] = []) => {
    nodes.push({ opType, input, output: [output], name: output, attribute })
    return output
  }
  const ints = (name: string, values: number[]) => ({ name, type: INTS, ints: values })
  const int = (name: string, value: number) => ({ name, type: INT, i: value })
  const matrix = (name: string, m: Matrix) => f32(name, [m.rows, m.cols], m.data)
  const dense = (x: string, name: string, layer: { kernel: Matrix; bias: Float32Array }) =>
    op('Add', [op('MatMul', [x, matrix(`${name}.kernel`, layer.kernel)], `${name}.mm`), f32(`${name}.bias`, [layer.bias.length], layer.bias)], name)
  const layerNorm = (x: string, name: string, norm: { scale: Float32Array; bias: Float32Array }) =>
    op('LayerNormalization', [x, f32(`${name}.scale`, [norm.scale.length], norm.scale), f32(`${name}.bias`, [norm.bias.length], norm.bias)], name, [
      int('axis', -1),
      { name: 'epsilon', type: FLOAT, f: weights.epsilon },
    ])

  const width = weights.embeddings.cols
  if (weights.timescales.length * 2 !== width) throw new Error(`${weights.timescales.length} timescales do not fill ${width} embedding dimensions`)
  i64('axes_last', [2])
  i64('axes_heads', [1, 2])
  i64('axis_seq', [1])
  i64('zero', [0])
  i64('one', [1])
  f32('one_f', [], new Float32Array([1]))
  f32('two_f', [], new Float32Array([2]))
  f32('neg_big', [], new Float32Array([-1e9]))
  f32('tiny', [], new Float32Array([1e-12]))

  // inputs: token_ids int64 [batch, seq] (any id where mask is 0), mask float [batch, seq]
  const mask3 = op('Unsqueeze', ['mask', 'axes_last'], 'mask3')
  const seq = op('Slice', [op('Shape', ['token_ids'], 'ids_shape'), 'one', i64('two', [2])], 'seq')
  const timing = op('Slice', [f32('timing_table', [weights.maxTokens, width], timingTable(weights.timescales, weights.maxTokens)), 'zero', seq, 'zero'], 'timing')
  const embedded = op('Gather', [matrix('embedding_table', weights.embeddings), 'token_ids'], 'embedded', [int('axis', 0)])
  const doubled = op('Mul', [embedded, 'two_f'], 'embedded2')
  let h = op('Mul', [op('Add', [doubled, timing], 'with_timing'), mask3], 'h0')
  // [batch, 1, 1, seq]: -1e9 on padded keys
  const keyBias = op('Unsqueeze', [op('Mul', [op('Sub', ['one_f', 'mask'], 'pad'), 'neg_big'], 'pad_bias'), 'axes_heads'], 'key_bias')

  weights.layers.forEach((layer, l) => {
    const p = `layer${l}`
    const attentionWidth = layer.qkv.kernel.cols / 3
    const headWidth = attentionWidth / layer.heads
    const normed = layerNorm(h, `${p}.norm1`, layer.norm1)
    const qkv = dense(normed, `${p}.qkv`, layer.qkv)
    nodes.push({ opType: 'Split', input: [qkv, i64(`${p}.split`, [attentionWidth, attentionWidth, attentionWidth])], output: [`${p}.q`, `${p}.k`, `${p}.v`], name: `${p}.split`, attribute: [int('axis', -1)] })
    const headShape = i64(`${p}.head_shape`, [0, 0, layer.heads, headWidth])
    const split = (x: string) => op('Transpose', [op('Reshape', [x, headShape], `${x}.r`)], `${x}.heads`, [ints('perm', [0, 2, 1, 3])])
    const q = op('Mul', [split(`${p}.q`), f32(`${p}.scale`, [], new Float32Array([1 / Math.sqrt(headWidth)]))], `${p}.q_scaled`)
    const kT = op('Transpose', [op('Reshape', [`${p}.k`, headShape], `${p}.k.r`)], `${p}.k_t`, [ints('perm', [0, 2, 3, 1])])
    const scores = op('Add', [op('MatMul', [q, kT], `${p}.scores_raw`), keyBias], `${p}.scores`)
    const attended = op('MatMul', [op('Softmax', [scores], `${p}.weights`, [int('axis', -1)]), split(`${p}.v`)], `${p}.attended`)
    const combined = op('Reshape', [op('Transpose', [attended], `${p}.attended_t`, [ints('perm', [0, 2, 1, 3])]), i64(`${p}.combine_shape`, [0, 0, attentionWidth])], `${p}.combined`)
    const attention = dense(combined, `${p}.output`, layer.output)
    const residual = layer.residual ? op('Mul', [dense(h, `${p}.residual`, layer.residual), mask3], `${p}.residual_masked`) : h
    const a = op('Add', [attention, residual], `${p}.a`)
    const inner = op('Relu', [dense(layerNorm(a, `${p}.norm2`, layer.norm2), `${p}.ffn1`, layer.ffn1)], `${p}.ffn_relu`)
    const ffn = op('Mul', [dense(inner, `${p}.ffn2`, layer.ffn2), mask3], `${p}.ffn`)
    h = op('Add', [ffn, a], `${p}.out`)
  })

  const summed = op('ReduceSum', [op('Mul', [h, mask3], 'h_masked'), 'axis_seq'], 'pooled_sum', [int('keepdims', 0)])
  const count = op('Max', [op('ReduceSum', ['mask', 'axis_seq'], 'count', [int('keepdims', 1)]), 'one_f'], 'count1')
  const pooled = op('Div', [summed, count], 'pooled')
  const hidden = op('Tanh', [dense(pooled, 'final', weights.final)], 'hidden')
  const squares = op('ReduceSumSquare', [hidden], 'squares', [ints('axes', [1]), int('keepdims', 1)])
  op('Div', [hidden, op('Sqrt', [op('Max', [squares, 'tiny'], 'squares1')], 'norm')], 'embeddings')
  const outWidth = weights.final.kernel.cols

  const tensor = (name: string, elemType: number, dims: (string | number)[]) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
  })
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'cairn-build-use-model',
    producerVersion: '1',
    domain: 'cairn',
    modelVersion: 1,
    docString,
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'use_lite',
      initializer,
      node: nodes,
      input: [tensor('token_ids', DataType.INT64, ['batch', 'seq']), tensor('mask', DataType.FLOAT, ['batch', 'seq'])],
      output: [tensor('embeddings', DataType.FLOAT, ['batch', outWidth])],
    },
  })
  // a plain copy: protobufjs hands back a Node Buffer, whose slice() would share memory
  return Uint8Array.from(onnx.ModelProto.encode(model).finish())
}
