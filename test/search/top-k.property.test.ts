// Best-k selection against the plain answer: every positive score sorted, best first, ties by
// key, cut at k. Scores come from a few values so ties are common.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareRanked, topK, topKOf, type Scored } from '../../src/search/top-k'

const scoreArb = fc.oneof(fc.constantFrom(0, -1, 0.25, 0.5, 0.5000001, 1, Number.NaN), fc.double({ min: -1, max: 1, noNaN: true }))
const caseArb = fc.record({
  scores: fc.array(scoreArb, { maxLength: 60 }),
  keys: fc.array(fc.constantFrom('a', 'b', 'c', 'obs-1', 'obs-10', 'obs-2', 'z'), { minLength: 60, maxLength: 60 }),
  k: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 70 })),
})

function sorted(scores: number[], keys: string[], k: number): Scored[] {
  const all = scores.flatMap((score, slot) => (score > 0 ? [{ key: keys[slot]!, score }] : []))
  return all.sort(compareRanked).slice(0, k)
}

describe('top-k selection', () => {
  it('topKOf over an array gives what sorting every positive score gives, and what topK gives', () => {
    fc.assert(
      fc.property(caseArb, ({ scores, keys, k }) => {
        const expected = sorted(scores, keys, k)
        expect(topKOf(Float64Array.from(scores), scores.length, k, (s) => keys[s]!)).toEqual(expected)
        expect(topKOf(scores, scores.length, k, (s) => keys[s]!)).toEqual(expected)
        expect(topK(scores.length, k, (s) => scores[s]!, (s) => keys[s]!)).toEqual(expected)
      }),
      { numRuns: 500 },
    )
  })

  it('reads only the first n scores', () => {
    expect(topKOf([0.5, 0.9, 0.7], 2, 5, (s) => `k${s}`)).toEqual([{ key: 'k1', score: 0.9 }, { key: 'k0', score: 0.5 }])
  })
})
