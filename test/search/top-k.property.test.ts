// Best-k selection against the plain answer: every positive score sorted, best first, ties by
// key, cut at k. Scores come from a few values so ties are common.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareRanked, topK, topKFused, topKOf, type Scored } from '../../src/search/top-k'

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

  it('topKFused gives what fusing every slot and selecting gives, ties and weights of zero included', () => {
    const round = (x: number) => Math.round(x * 1e9) / 1e9
    const similarityArb = fc.oneof(fc.constantFrom(0, 0.3, 0.6, 0.6000000238, 0.9), fc.double({ min: -0.2, max: 1, noNaN: true }))
    const fusedCase = fc.record({
      similarity: fc.array(similarityArb, { maxLength: 80 }),
      text: fc.array(fc.tuple(fc.nat(90), fc.constantFrom(0, 0.2, 0.5, 1)), { maxLength: 20 }),
      k: fc.integer({ min: 1, max: 30 }),
      vector: fc.constantFrom(0, 0.25, 0.5, 0.7, 1),
      order: fc.array(fc.nat(1000), { minLength: 80, maxLength: 80 }),
    })
    fc.assert(
      fc.property(fusedCase, ({ similarity, text, k, vector, order }) => {
        const n = similarity.length
        // keys in another order than slots, so ties are not broken by slot
        const keyOf = (s: number) => `e${order[s]!}-${s}`
        const sims = Float32Array.from(similarity)
        const hits = new Map(text.filter(([slot]) => slot < n))
        const weights = { text: 1 - vector, vector }
        const everySlot = Float64Array.from(sims, (sim, s) => round(weights.text * (hits.get(s) ?? 0) + weights.vector * sim))
        const expected = topKOf(everySlot, n, k, keyOf)
        expect(topKFused(sims, n, k, weights, hits, keyOf, round, new Float64Array(n))).toEqual(expected)
      }),
      { numRuns: 1000 },
    )
  })
})
