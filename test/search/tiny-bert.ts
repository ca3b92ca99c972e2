// Builds a tiny BERT-shaped ONNX model and its WordPiece tokenizer.json at test time, plus a
// plain-JS reference of the same network so tests can check the embedder's real pipeline.
// Network: word + position + token-type embeddings + attention-mask bias -> tanh(x W + b).
// Padded positions keep non-zero states (as in a real BERT), so pooling must honour the mask.

import onnxProto from 'onnx-proto'
import { mulberry32 } from '../support/mulberry32'

const { onnx } = onnxProto

export const HIDDEN = 8
const MAX_POSITIONS = 64

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
const WORDS = [
  'the', 'a', 'is', 'of', 'and', 'to', 'in', 'my', 'plays', 'play', 'music', 'song',
  'physician', 'doctor', 'nurse', 'hospital', 'patient', 'medicine',
  'guitar', 'piano', 'drum', 'violin', 'band',
  'server', 'database', 'code', 'bug', 'deploy',
  'cat', 'dog', 'river', 'mountain', 'blue', 'green', '.', ',', '!', '?',
  '##s', '##ing', '##ed', '##er',
]
export const VOCAB: string[] = [...SPECIAL, ...WORDS]
export const tokenId = (token: string): number => {
  const id = VOCAB.indexOf(token)
  if (id < 0) throw new Error(`unknown tiny-bert token ${token}`)
  return id
}

export interface TinyBertWeights {
  word: Float32Array // [V, H]
  position: Float32Array // [P, H]
  type: Float32Array // [2, H]
  w: Float32Array // [H, H]
  b: Float32Array // [H]
  maskBias: Float32Array // [H], added where attention_mask is 1
}

/** Uniform in [-0.5, 0.5), the same on every run. */
function prng(seed: number): () => number {
  const next = mulberry32(seed)
  return () => next() - 0.5
}

export function tinyBertWeights(seed = 7): TinyBertWeights {
  const random = prng(seed)
  const fill = (n: number, scale: number) => Float32Array.from({ length: n }, () => random() * scale)
  const word = fill(VOCAB.length * HIDDEN, 2)
  // "doctor" is "physician" plus a little noise, so they should embed close together.
  const physician = tokenId('physician') * HIDDEN
  const doctor = tokenId('doctor') * HIDDEN
  for (let h = 0; h < HIDDEN; h++) word[doctor + h] = word[physician + h]! + random() * 0.2
  return { word, position: fill(MAX_POSITIONS * HIDDEN, 0.4), type: fill(2 * HIDDEN, 0.2), w: fill(HIDDEN * HIDDEN, 1.5), b: fill(HIDDEN, 0.2), maskBias: fill(HIDDEN, 1) }
}

function raw(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength))
}

export function tinyBertModel(weights: TinyBertWeights = tinyBertWeights()): Uint8Array {
  const { DataType } = onnx.TensorProto
  const INT = onnx.AttributeProto.AttributeType.INT
  const f32 = (name: string, dims: number[], values: Float32Array) => ({ name, dims, dataType: DataType.FLOAT, rawData: raw(values) })
  const i64 = (name: string, dims: number[], values: number[]) => ({ name, dims, dataType: DataType.INT64, int64Data: values })
  const tensor = (name: string, elemType: number, dims: (string | number)[]) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
  })
  const node = (opType: string, input: string[], output: string, attribute: object[] = []) => ({ opType, input, output: [output], name: output, attribute })
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'cairn-tests',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'tiny_bert',
      initializer: [
        f32('word_embeddings', [VOCAB.length, HIDDEN], weights.word),
        f32('position_embeddings', [MAX_POSITIONS, HIDDEN], weights.position),
        f32('token_type_embeddings', [2, HIDDEN], weights.type),
        f32('dense_w', [HIDDEN, HIDDEN], weights.w),
        f32('dense_b', [HIDDEN], weights.b),
        f32('mask_bias', [HIDDEN], weights.maskBias),
        i64('zero', [], [0]),
        i64('one', [], [1]),
        i64('axis_last', [1], [2]),
      ],
      node: [
        node('Gather', ['word_embeddings', 'input_ids'], 'words'),
        node('Gather', ['token_type_embeddings', 'token_type_ids'], 'types'),
        node('Shape', ['input_ids'], 'ids_shape'),
        node('Gather', ['ids_shape', 'one'], 'seq_len', [{ name: 'axis', type: INT, i: 0 }]),
        node('Range', ['zero', 'seq_len', 'one'], 'positions'),
        node('Gather', ['position_embeddings', 'positions'], 'position_states'),
        node('Add', ['words', 'types'], 'sum1'),
        node('Add', ['sum1', 'position_states'], 'sum2'),
        node('Cast', ['attention_mask'], 'mask_f', [{ name: 'to', type: INT, i: DataType.FLOAT }]),
        node('Unsqueeze', ['mask_f', 'axis_last'], 'mask_3d'),
        node('Mul', ['mask_3d', 'mask_bias'], 'mask_term'),
        node('Add', ['sum2', 'mask_term'], 'embedded'),
        node('MatMul', ['embedded', 'dense_w'], 'projected'),
        node('Add', ['projected', 'dense_b'], 'biased'),
        node('Tanh', ['biased'], 'last_hidden_state'),
      ],
      input: [
        tensor('input_ids', DataType.INT64, ['batch', 'sequence']),
        tensor('attention_mask', DataType.INT64, ['batch', 'sequence']),
        tensor('token_type_ids', DataType.INT64, ['batch', 'sequence']),
      ],
      output: [tensor('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', HIDDEN])],
    },
  })
  // A plain copy: protobufjs hands back a Node Buffer, whose slice() would share memory.
  return Uint8Array.from(onnx.ModelProto.encode(model).finish())
}

/** The sentence embedding the model should yield for these tokens: masked mean of states, unit length. */
export function referenceEmbedding(tokens: string[], weights: TinyBertWeights = tinyBertWeights()): Float32Array {
  const sum = new Float64Array(HIDDEN)
  tokens.forEach((token, position) => {
    const id = tokenId(token)
    const x = Array.from({ length: HIDDEN }, (_, h) => weights.word[id * HIDDEN + h]! + weights.type[h]! + weights.position[position * HIDDEN + h]! + weights.maskBias[h]!)
    for (let o = 0; o < HIDDEN; o++) {
      let acc = weights.b[o]!
      for (let h = 0; h < HIDDEN; h++) acc += x[h]! * weights.w[h * HIDDEN + o]!
      sum[o]! += Math.tanh(acc)
    }
  })
  const norm = Math.sqrt(sum.reduce((n, x) => n + x * x, 0))
  return Float32Array.from(sum, (x) => x / norm)
}

/** A BERT-style tokenizer.json (lowercasing normalizer, WordPiece, [CLS] ... [SEP]). */
export function tinyTokenizerJson(): Record<string, unknown> {
  const special = (token: string) => ({ id: tokenId(token), content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })
  const template = (id: string) => ({ SpecialToken: { id, type_id: 0 } })
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [template('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, template('[SEP]')],
      pair: [template('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, template('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [tokenId('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [tokenId('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((token, id) => [token, id])),
    },
  }
}
