// What connects a note to the best hits: same day, near in time, and activation spread from named entities.
import { describe, expect, it } from 'vitest'
import { activationPerNote, anchorsOf, replyLift, sessionLift, spreadActivation, timeAnchorLift, type Link } from '../../src/core/note-context'

const DAY = 86_400_000
const day = (n: number, hour = 12) => n * DAY + hour * 3_600_000

describe('anchorsOf', () => {
  it('takes the k best candidates with a score, best first', () => {
    const c = [{ at: 0, score: 0.2 }, { at: 0, score: 0 }, { at: 0, score: 0.9 }, { at: 0, score: 0.5 }, { at: 0, score: 0.1 }]
    expect(anchorsOf(c, 3)).toEqual([2, 3, 0])
    expect(anchorsOf(c, 10)).toEqual([2, 3, 0, 4])
    expect(anchorsOf([{ at: 0, score: 0 }], 3)).toEqual([])
  })
})

describe('sessionLift', () => {
  it('lifts notes of the same day as an anchor by a share of the best anchor of that day', () => {
    const c = [{ at: day(10, 9), score: 1 }, { at: day(10, 18), score: 0 }, { at: day(11), score: 0 }, { at: day(10, 1), score: 0.4 }]
    const lift = sessionLift(c, [0, 3], 0.1)
    expect(lift[0]).toBe(0) // an anchor gains nothing from itself
    expect(lift[1]).toBeCloseTo(0.1)
    expect(lift[2]).toBe(0)
    expect(lift[3]).toBe(0)
  })

  it('lifts nothing at share 0 or with no anchor', () => {
    const c = [{ at: day(1), score: 1 }, { at: day(1), score: 0 }]
    expect([...sessionLift(c, [0], 0)]).toEqual([0, 0])
    expect([...sessionLift(c, [], 0.5)]).toEqual([0, 0])
  })
})

describe('replyLift', () => {
  // written: the anchor at 10:00; a reply at 10:01, a later note at 10:02, one before at 09:59, one of another day right after
  const c = [{ at: day(5), score: 0.8 }, { at: day(5), score: 0 }, { at: day(5), score: 0.3 }, { at: day(5), score: 0 }, { at: day(6), score: 0 }]
  const written = [day(5, 10), day(5, 10) + 60_000, day(5, 10) + 120_000, day(5, 10) - 60_000, day(5, 10) + 30_000]

  it('lifts only the note written right after an anchor on its day, by a share of its score', () => {
    const lift = replyLift(c, written, [0], 0.1)
    expect(lift[1]).toBeCloseTo(0.08)
    expect([lift[0], lift[2], lift[3], lift[4]]).toEqual([0, 0, 0, 0])
  })

  it('an anchor lifts no other anchor, and a note after two anchors takes the better one\'s share', () => {
    const scored = c.map((x, i) => (i === 3 ? { ...x, score: 0.4 } : x))
    // anchor 3 (09:59) is followed by anchor 0 (10:00), which it skips, then by note 1
    const lift = replyLift(scored, written, [0, 3], 0.1)
    expect(lift[0]).toBe(0)
    expect(lift[1]).toBeCloseTo(0.08)
    // alone, anchor 3 lifts note 0, written right after it
    expect(replyLift(scored, written, [3], 0.1)[0]).toBeCloseTo(0.04)
  })

  it('skips notes whose write time is unknown or the same as the anchor\'s, and lifts nothing at share 0', () => {
    expect(replyLift(c, [written[0]!, NaN, written[0]!, NaN, NaN], [0], 0.1)[2]).toBe(0)
    expect(replyLift(c, [written[0]!, NaN, written[2]!, NaN, NaN], [0], 0.1)[2]).toBeCloseTo(0.08)
    expect([...replyLift(c, written, [0], 0)]).toEqual([0, 0, 0, 0, 0])
    expect([...replyLift(c, [NaN, ...written.slice(1)], [0], 0.1)]).toEqual([0, 0, 0, 0, 0])
  })
})

describe('timeAnchorLift', () => {
  const c = [{ at: day(20), score: 1 }, { at: day(20), score: 0 }, { at: day(27), score: 0 }, { at: day(13), score: 0 }, { at: day(90), score: 0 }]
  it('halves the lift every half-life away from the anchor', () => {
    const lift = timeAnchorLift(c, [0], 0.2, 7)
    expect(lift[0]).toBe(0)
    expect(lift[1]).toBeCloseTo(0.2)
    expect(lift[2]).toBeCloseTo(0.1)
    expect(lift[3]).toBeCloseTo(0.1)
    expect(lift[4]).toBeLessThan(0.001)
  })

  it('with a relation, lifts only notes on that side of the anchor day', () => {
    const after = timeAnchorLift(c, [0], 0.2, 7, 'after')
    expect(after[2]).toBeCloseTo(0.1)
    expect(after[1]).toBe(0)
    expect(after[3]).toBe(0)
    const before = timeAnchorLift(c, [0], 0.2, 7, 'before')
    expect(before[3]).toBeCloseTo(0.1)
    expect(before[2]).toBe(0)
  })
})

describe('spreadActivation', () => {
  const graph: Record<string, Link[]> = {
    ann: [{ other: 'bob', weight: 3 }, { other: 'cat', weight: 1 }],
    bob: [{ other: 'ann', weight: 3 }, { other: 'dan', weight: 1 }],
    cat: [{ other: 'ann', weight: 1 }],
    dan: [{ other: 'bob', weight: 1 }],
  }
  const linksOf = (k: string) => graph[k] ?? []

  it('keeps the seed the most and passes the rest by edge weight', () => {
    const a = spreadActivation(['ann'], linksOf, 1, 0.5)
    expect(a.get('ann')).toBeCloseTo(0.5)
    expect(a.get('bob')).toBeCloseTo(0.375)
    expect(a.get('cat')).toBeCloseTo(0.125)
    expect(a.has('dan')).toBe(false)
  })

  it('reaches two steps and conserves the mass', () => {
    const a = spreadActivation(['ann'], linksOf, 2, 0.5)
    expect(a.get('dan')).toBeGreaterThan(0)
    let total = 0
    for (const v of a.values()) total += v
    expect(total).toBeCloseTo(1)
  })

  it('splits the mass among several seeds, and none gives nothing', () => {
    const a = spreadActivation(['cat', 'dan'], linksOf, 0, 0.5)
    expect(a.get('cat')).toBeCloseTo(0.5)
    expect(a.get('dan')).toBeCloseTo(0.5)
    expect(spreadActivation([], linksOf, 2, 0.5).size).toBe(0)
  })
})

describe('activationPerNote', () => {
  it('spreads an entity activation over its notes so a hub lends each little', () => {
    expect(activationPerNote(0.5, 1)).toBe(0.5)
    expect(activationPerNote(0.5, 10_000)).toBeCloseTo(0.005)
    expect(activationPerNote(0.5, 0)).toBe(0)
  })
})
