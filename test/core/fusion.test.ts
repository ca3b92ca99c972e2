// How a note index merges its ranked lists: the weighted sum, the sum of lists stretched to
// [0, 1], and reciprocal-rank fusion, each against figures worked by hand.
import { describe, expect, it } from 'vitest'
import { fuse, type FusedList } from '../../src/core/fusion'

const keys = ['a', 'b', 'c', 'd']
const keyOf = (i: number) => keys[i]!

describe('fuse', () => {
  it('sum: adds each list\'s scores by its weight', () => {
    const lists: FusedList[] = [
      { weight: 1, scores: [1, 0.5, 0, 0] },
      { weight: 0.5, scores: [0.2, 0.4, 0.8, -0.2] },
    ]
    expect(Array.from(fuse(lists, 4, { rule: 'sum', k: 60 }, keyOf))).toEqual([1.1, 0.7, 0.4, -0.1])
  })

  it('scaled: maps each list onto [0, 1] over the candidates before weighing it', () => {
    const lists: FusedList[] = [
      { weight: 1, scores: [1, 0.5, 0, 0] },
      // 0.2 .. 0.6 stretched: 0.2 -> 0, 0.6 -> 1
      { weight: 2, scores: [0.6, 0.4, 0.2, 0.2] },
    ]
    const out = Array.from(fuse(lists, 4, { rule: 'scaled', k: 60 }, keyOf))
    expect(out.map((x) => Math.round(x * 1e9) / 1e9)).toEqual([3, 1.5, 0, 0])
  })

  it('scaled: a list whose scores are all alike adds nothing', () => {
    const out = fuse([{ weight: 1, scores: [0.3, 0.3, 0.3, 0.3] }, { weight: 1, scores: [0, 1, 0, 0] }], 4, { rule: 'scaled', k: 60 }, keyOf)
    expect(Array.from(out)).toEqual([0, 1, 0, 0])
  })

  it('rank: a note first in one list and absent from the other scores 1 / (k + 1)', () => {
    const k = 60
    const lists: FusedList[] = [
      { weight: 1, scores: [0.9, 0.5, 0, 0] },
      { weight: 1, scores: [0, 0.8, 0.7, 0] },
    ]
    const out = fuse(lists, 4, { rule: 'rank', k }, keyOf)
    // a: first in the first list, absent from the second; b: second and first; c: absent and second; d: in neither
    expect(out[0]).toBeCloseTo(1 / (k + 1), 12)
    expect(out[1]).toBeCloseTo(1 / (k + 2) + 1 / (k + 1), 12)
    expect(out[2]).toBeCloseTo(1 / (k + 2), 12)
    expect(out[3]).toBe(0)
    // b, in both lists, passes a, first in one: what reciprocal-rank fusion is for
    expect(out[1]!).toBeGreaterThan(out[0]!)
  })

  it('rank: only the order counts, not how far apart the scores are; weights scale each list', () => {
    const near = fuse([{ weight: 2, scores: [0.51, 0.5, 0, 0] }], 4, { rule: 'rank', k: 1 }, keyOf)
    const far = fuse([{ weight: 2, scores: [100, 0.5, 0, 0] }], 4, { rule: 'rank', k: 1 }, keyOf)
    expect(Array.from(near)).toEqual(Array.from(far))
    expect(Array.from(near)).toEqual([2 / 2, 2 / 3, 0, 0])
  })

  it('rank: equal scores are placed by key, whatever order the candidates come in', () => {
    const forward = fuse([{ weight: 1, scores: [0.5, 0.5, 0.9, 0] }], 4, { rule: 'rank', k: 0 }, keyOf)
    expect(Array.from(forward)).toEqual([1 / 2, 1 / 3, 1, 0])
    const reversed = ['d', 'c', 'b', 'a']
    const backward = fuse([{ weight: 1, scores: [0, 0.9, 0.5, 0.5] }], 4, { rule: 'rank', k: 0 }, (i) => reversed[i]!)
    expect(Array.from(backward)).toEqual([0, 1, 1 / 3, 1 / 2])
  })

  it('a list of weight 0 is left out under every rule', () => {
    for (const rule of ['sum', 'scaled', 'rank'] as const) {
      const out = fuse([{ weight: 0, scores: [1, 0.5, 0.2, 0] }], 4, { rule, k: 60 }, keyOf)
      expect(Array.from(out)).toEqual([0, 0, 0, 0])
    }
  })
})
