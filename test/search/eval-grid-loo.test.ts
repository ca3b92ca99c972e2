// Leave-one-conversation-out over two files' grids: each conversation is scored at the weighting
// chosen on the others, never at its own best.
import { describe, expect, it } from 'vitest'
import { leaveOneOut, recallOver, type GridByConversation } from '../../scripts/eval/grid-loo'

const points = [{ w: 0 }, { w: 1 }]
/** Three conversations; weighting 1 is better on x and y, weighting 0 on z. */
const facts: GridByConversation = {
  points,
  conversations: [
    { sampleId: 'x', questions: 10, 'recall@10': [0.5, 0.7] },
    { sampleId: 'y', questions: 10, 'recall@10': [0.5, 0.7] },
    { sampleId: 'z', questions: 20, 'recall@10': [0.9, 0.6] },
  ],
}
/** The turns agree on x and y, and on z prefer weighting 1 a little. */
const turns: GridByConversation = {
  points,
  conversations: [
    { sampleId: 'x', questions: 5, 'recall@10': [0.4, 0.6] },
    { sampleId: 'y', questions: 5, 'recall@10': [0.4, 0.6] },
    { sampleId: 'z', questions: 5, 'recall@10': [0.5, 0.55] },
  ],
}

describe('grid leave-one-out', () => {
  it('recallOver weighs each conversation by its questions', () => {
    expect(recallOver(facts, new Set(['x', 'z']), 0)).toBeCloseTo((10 * 0.5 + 20 * 0.9) / 30, 12)
  })

  it('scores each conversation at the weighting the others chose, in every file', () => {
    const both = (others: ReadonlySet<string>, p: number) => (recallOver(facts, others, p) + recallOver(turns, others, p)) / 2
    const { held, picks } = leaveOneOut([facts, turns], both)
    // held out, x and z pick on the others, y likewise; z's own best (0 on the facts) is not what it is scored at
    expect(picks).toEqual([
      { sampleId: 'x', point: { w: 0 } },
      { sampleId: 'y', point: { w: 0 } },
      { sampleId: 'z', point: { w: 1 } },
    ])
    expect(held[0]).toBeCloseTo((10 * 0.5 + 10 * 0.5 + 20 * 0.6) / 40, 12)
    expect(held[1]).toBeCloseTo((5 * 0.4 + 5 * 0.4 + 5 * 0.55) / 15, 12)
  })
})
