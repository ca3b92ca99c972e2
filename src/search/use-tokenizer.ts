// The Universal Sentence Encoder lite tokenizer: a unigram SentencePiece-style Viterbi over the
// model's scored pieces (`vocab.json`), with the same tie and unknown-character rules as the
// TF.js encoder the published weights are served with, so token ids match it exactly.

import { MemoryError } from '../core/errors'

/** SentencePiece's word-start mark (U+2581), put before the text and in place of each space. */
export const WORD_START = '\u2581'
/** Id of the unknown piece; a run of unknown characters becomes one such token. */
export const UNKNOWN_ID = 0
/** Ids below this are unknown/control/user symbols that text never matches. */
const RESERVED = 6

/** `vocab.json`: `[piece, log probability]` per id (a few published scores are `null`, read as 0). */
export type UsePieces = ReadonlyArray<readonly [string, number | null]>

interface TrieNode {
  next: Map<string, TrieNode>
  id: number
  score: number
}

const newNode = (): TrieNode => ({ next: new Map(), id: -1, score: 0 })

export class UseTokenizer {
  private readonly root = newNode()
  readonly size: number

  constructor(pieces: UsePieces) {
    this.size = pieces.length
    for (let id = RESERVED; id < pieces.length; id++) {
      const [piece, score] = pieces[id]!
      let node = this.root
      for (const char of piece) {
        let child = node.next.get(char)
        if (!child) node.next.set(char, (child = newNode()))
        node = child
      }
      // a piece listed twice keeps its last id, as the reference encoder does
      node.id = id
      node.score = score ?? 0
    }
  }

  /** Token ids of one text, unbounded in length (the model reads the first 128). */
  encode(text: string): number[] {
    const normalized = text.normalize('NFKC')
    if (!normalized) return []
    const chars = Array.from(WORD_START + normalized.replaceAll(' ', WORD_START))
    const n = chars.length
    // best[e]: score of the best segmentation of chars[0, e); pick[e]/from[e]: its last piece.
    const best = new Float64Array(n + 1)
    const pick = new Int32Array(n + 1)
    const from = new Int32Array(n + 1)
    const take = (start: number, end: number, id: number, score: number) => {
      const total = score + best[start]!
      // Candidates arrive by increasing start; a later one wins ties, and a total of exactly 0
      // counts as unset (the reference's rule, which pieces scored 0 or null, such as `:00` and
      // `:`, and unknown characters can meet).
      if (best[end] === 0 || total >= best[end]!) {
        best[end] = total
        pick[end] = id
        from[end] = start
      }
    }
    // Starts in increasing order: best[start] is final when its edges are relaxed, and each end
    // meets its candidates in the reference's order.
    for (let start = 0; start < n; start++) {
      let node: TrieNode | undefined = this.root
      let matched = false
      for (let end = start; end < n; end++) {
        node = node.next.get(chars[end]!)
        if (!node) break
        if (node.id >= 0) {
          take(start, end + 1, node.id, node.score)
          matched = true
        }
      }
      // no piece starts here: the character alone is an unknown token with score 0
      if (!matched) take(start, start + 1, UNKNOWN_ID, 0)
    }
    const ids: number[] = []
    for (let end = n; end > 0; end = from[end]!) {
      const id = pick[end]!
      if (id === UNKNOWN_ID && ids[ids.length - 1] === UNKNOWN_ID) continue
      ids.push(id)
    }
    return ids.reverse()
  }
}

/** Checks the parsed `vocab.json` shape: an array of `[string, number | null]`. */
export function parseUsePieces(value: unknown): UsePieces {
  const ok = Array.isArray(value) && value.length > RESERVED && value.every((p) => Array.isArray(p) && typeof p[0] === 'string' && (typeof p[1] === 'number' || p[1] === null))
  if (!ok) throw new MemoryError('model_failed', 'The USE-lite vocabulary is not a list of [piece, score] pairs; rebuild it with `npm run build:use-model`.', {})
  return value as UsePieces
}
