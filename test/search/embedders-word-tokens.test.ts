import { describe, expect, it } from 'vitest'
import { isReachableWord, vocabularyPieces, wordTokens } from '../../src/search/word-tokens'

describe('GloVe word tokens', () => {
  it('lowercases, drops punctuation and keeps word-internal joiners', () => {
    expect(wordTokens('Hello, World! (Project Atlas)')).toEqual(['hello', 'world', 'project', 'atlas'])
    expect(wordTokens("U.S. e-mail AT&T 1,000 O’Brien")).toEqual(['u.s.', 'e-mail', 'at&t', '1,000', "o'brien"])
    expect(wordTokens('Ｆｕｌｌ width, café')).toEqual(['full', 'width', 'café'])
    expect(wordTokens('a,b')).toEqual(['a', 'b'])
  })

  it('falls back to smaller known pieces: trailing period, clitics, then separators', () => {
    const known = new Set(['doctor', 'do', "n't", 'alice', "'s", 'state', 'of', 'the', 'art', 'u.s.'])
    const has = (w: string) => known.has(w)
    expect(vocabularyPieces('doctor.', has)).toEqual(['doctor'])
    expect(vocabularyPieces("don't", has)).toEqual(['do', "n't"])
    expect(vocabularyPieces("alice's", has)).toEqual(['alice', "'s"])
    expect(vocabularyPieces('state-of-the-art', has)).toEqual(['state', 'of', 'the', 'art'])
    expect(vocabularyPieces('u.s.', has)).toEqual(['u.s.'])
    expect(vocabularyPieces('zzyzx', has)).toEqual([])
  })

  it('counts words and clitics as reachable vocabulary, punctuation not', () => {
    expect(isReachableWord('doctor')).toBe(true)
    expect(isReachableWord("n't")).toBe(true)
    expect(isReachableWord('e-mail')).toBe(true)
    expect(isReachableWord(',')).toBe(false)
    expect(isReachableWord('--')).toBe(false)
    expect(isReachableWord('Doctor')).toBe(false)
  })
})
