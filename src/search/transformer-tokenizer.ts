// Turns texts into BERT inputs with a `tokenizer.json` (WordPiece for sentence-transformers),
// read by @huggingface/tokenizers: small, dependency-free, and runs in Node and in workers.

import { Tokenizer } from '@huggingface/tokenizers'
import { MemoryError } from '../core/errors'

export interface EncodedBatch {
  batch: number
  seq: number
  inputIds: BigInt64Array
  attentionMask: BigInt64Array
  tokenTypeIds: BigInt64Array
  /** attention mask as numbers, for pooling */
  mask: Uint8Array
}

export class TransformerTokenizer {
  private readonly tokenizer: Tokenizer

  constructor(
    tokenizerJson: unknown,
    tokenizerConfig: Record<string, unknown> = {},
    private readonly maxLength = 256,
  ) {
    try {
      this.tokenizer = new Tokenizer(tokenizerJson as object, tokenizerConfig)
    } catch (err) {
      throw new MemoryError('model_failed', `The tokenizer.json could not be read: ${(err as Error).message}. Use the tokenizer.json exported with the model.`, {})
    }
  }

  /** Token ids with special tokens; over-long texts keep their head and the closing special token. */
  ids(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids
    if (ids.length <= this.maxLength) return ids
    return [...ids.slice(0, this.maxLength - 1), ids[ids.length - 1]!]
  }

  /** Pads to the longest sequence; padding has attention 0 and id 0 (BERT's [PAD]). */
  pad(sequences: number[][]): EncodedBatch {
    const batch = sequences.length
    const seq = Math.max(1, ...sequences.map((ids) => ids.length))
    const inputIds = new BigInt64Array(batch * seq)
    const attentionMask = new BigInt64Array(batch * seq)
    const mask = new Uint8Array(batch * seq)
    const padId = BigInt(this.tokenizer.token_to_id('[PAD]') ?? 0)
    sequences.forEach((ids, row) => {
      for (let t = 0; t < seq; t++) {
        const at = row * seq + t
        if (t < ids.length) {
          inputIds[at] = BigInt(ids[t]!)
          attentionMask[at] = 1n
          mask[at] = 1
        } else {
          inputIds[at] = padId
        }
      }
    })
    return { batch, seq, inputIds, attentionMask, tokenTypeIds: new BigInt64Array(batch * seq), mask }
  }
}
