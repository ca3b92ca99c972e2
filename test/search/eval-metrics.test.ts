import { describe, expect, it } from 'vitest'
import { mean, ndcgAtK, pairedBootstrap, recallAtK } from '../../scripts/eval/metrics'
import { maskLemmas, buildTask } from '../../scripts/eval/task'
import { parseLine, type Synset } from '../../scripts/eval/wordnet'

describe('eval metrics', () => {
  it('recall@k counts relevant items in the first k over all relevant items', () => {
    const relevant = new Set(['a', 'b', 'c', 'd'])
    expect(recallAtK(['a', 'x', 'b', 'y', 'c'], relevant, 3)).toBe(2 / 4)
    expect(recallAtK(['a', 'x', 'b', 'y', 'c'], relevant, 10)).toBe(3 / 4)
    expect(recallAtK(['x'], relevant, 10)).toBe(0)
    expect(recallAtK(['a'], new Set(), 10)).toBe(0)
  })

  it('nDCG@k matches hand-computed values', () => {
    // one relevant item at rank 3: (1/log2 4) / 1 = 0.5
    expect(ndcgAtK(['x', 'y', 'a'], new Set(['a']), 10)).toBeCloseTo(0.5, 12)
    // relevant at ranks 1 and 3 of two relevant: (1 + 0.5) / (1 + 1/log2 3)
    expect(ndcgAtK(['a', 'x', 'b'], new Set(['a', 'b']), 10)).toBeCloseTo(1.5 / (1 + 1 / Math.log2(3)), 12)
    // a perfect ranking scores 1; ranks past k count nothing
    expect(ndcgAtK(['a', 'b', 'x'], new Set(['a', 'b']), 10)).toBe(1)
    expect(ndcgAtK(['x', 'y', 'a'], new Set(['a']), 2)).toBe(0)
    // the ideal is capped at k: 3 relevant, k = 2, found at ranks 1 and 2
    expect(ndcgAtK(['a', 'b'], new Set(['a', 'b', 'c']), 2)).toBe(1)
  })

  it('the paired bootstrap brackets a constant difference and is reproducible', () => {
    const a = [0.1, 0.2, 0.3, 0.4]
    const b = a.map((x) => x + 0.25)
    const ci = pairedBootstrap(a, b)
    expect(ci.low).toBeCloseTo(0.25, 12)
    expect(ci.high).toBeCloseTo(0.25, 12)
    const noisy = pairedBootstrap([0, 1, 0, 1, 0], [1, 1, 0, 0, 1], 500, 3)
    expect(noisy).toEqual(pairedBootstrap([0, 1, 0, 1, 0], [1, 1, 0, 0, 1], 500, 3))
    expect(noisy.low).toBeLessThanOrEqual(mean([1, 0, 0, -1, 1]))
    expect(noisy.high).toBeGreaterThanOrEqual(mean([1, 0, 0, -1, 1]))
  })
})

describe('WordNet task', () => {
  it('parses a data.noun line into lemmas, definition and examples', () => {
    const s = parseLine('00218640 04 n 02 laying_waste 0 ruin 0 001 @ 00217881 n 0000 | destruction achieved by wrecking; "the ruin of the city"; "a slow ruin"  ')
    expect(s).toEqual({ offset: '00218640', lexname: 'act', lemmas: ['laying waste', 'ruin'], definition: 'destruction achieved by wrecking', examples: ['the ruin of the city', 'a slow ruin'] })
  })

  it('masks the lemmas and their inflections in a usage example', () => {
    expect(maskLemmas('the pilot reported two kills during the mission', ['kill'])).toBe('the pilot reported two during the mission')
    expect(maskLemmas('he took a laying waste approach', ['laying waste'])).toBe('he took a approach')
  })

  it('never indexes a synonym query as a name, and holds usage examples out of their entity', () => {
    const synsets: Synset[] = Array.from({ length: 40 }, (_, i) => ({
      offset: String(i).padStart(8, '0'),
      lexname: 'artifact',
      lemmas: [`name${i}`, `alias${i}`, ...(i % 2 ? ['shared'] : [])],
      definition: `thing number ${i}`,
      examples: [`first example about thing ${i} here`, `second example about object ${i} there`],
    }))
    const task = buildTask(synsets, { sample: 1, devPerKind: 100, testPerKind: 100, maxQueries: 2 })
    const names = new Set(task.docs.map((d) => d.name.toLowerCase()))
    const all = [...task.dev, ...task.test]
    for (const q of all.filter((q) => q.kind === 'synonym')) expect(names.has(q.text)).toBe(false)
    const shared = all.find((q) => q.text === 'shared')!
    expect(shared.relevant).toHaveLength(20)
    for (const q of all.filter((q) => q.kind === 'usage')) {
      const target = task.docs.find((d) => d.key === q.relevant[0])!
      expect(target.queries).toEqual(['first example about thing ' + target.name.slice(4) + ' here'])
    }
    // dev and test never share a target
    const devTargets = new Set(task.dev.flatMap((q) => q.relevant.map((r) => `${q.kind}:${q.text}:${r}`)))
    for (const q of task.test) for (const r of q.relevant) expect(devTargets.has(`${q.kind}:${q.text}:${r}`)).toBe(false)
  })
})
