// The time a question names, read by rules: named days, months and years, "last week", before / after, "first".
import { describe, expect, it } from 'vitest'
import { lastPeriod, questionTime } from '../../src/core/question-time'

describe('questionTime', () => {
  it('reads a named day, in either order, as that day and the week after it', () => {
    const week = { from: '2023-05-07T00:00:00.000Z', to: '2023-05-14T00:00:00.000Z' }
    expect(questionTime('What did Gina do on 7 May, 2023?').range).toEqual(week)
    expect(questionTime('What did Gina do on May 7th 2023?').range).toEqual(week)
    expect(questionTime('what happened on 2023-05-07').range).toEqual(week)
  })

  it('reads a month and year, and a year, as the whole period', () => {
    expect(questionTime('What did Maria donate in December 2023?').range).toEqual({ from: '2023-12-01T00:00:00.000Z', to: '2024-01-01T00:00:00.000Z' })
    expect(questionTime('trips in 2022').range).toEqual({ from: '2022-01-01T00:00:00.000Z', to: '2023-01-01T00:00:00.000Z' })
  })

  it('does not take a day that does not exist', () => {
    expect(questionTime('on 31 February 2023').range).toEqual({ from: '2023-02-01T00:00:00.000Z', to: '2023-03-01T00:00:00.000Z' })
  })

  it('reads before / after, last week / month / year and "first"', () => {
    expect(questionTime('How did Melanie feel after the accident?')).toEqual({ order: 'newest', relation: 'after' })
    expect(questionTime('What did he do before the move?').relation).toBe('before')
    expect(questionTime('what happened before and after the wedding').relation).toBeUndefined()
    expect(questionTime('Where did John go last year?').last).toBe('year')
    expect(questionTime('When did she first paint?').order).toBe('oldest')
  })

  it('names no time in a plain question, and coarse reads only months and years', () => {
    expect(questionTime('What does Caroline paint?')).toEqual({ order: 'newest' })
    expect(questionTime('')).toEqual({ order: 'newest' })
    expect(questionTime('after the race on 7 May 2023', true)).toEqual({ order: 'newest', range: { from: '2023-05-01T00:00:00.000Z', to: '2023-06-01T00:00:00.000Z' } })
    expect(questionTime('How did Melanie feel after the accident?', true)).toEqual({ order: 'newest' })
  })
})

describe('a question that asks for a time', () => {
  it('is told apart from one that asks what, where or how', () => {
    for (const q of ['When did Caroline go to the support group?', 'how long ago was the race?', 'What year did Jo move?', 'In which month did Sam start painting?', '"When is the party?"']) {
      expect(questionTime(q).asksTime, q).toBe(true)
    }
    for (const q of ['What did Jo make at the pottery class?', 'Where did they camp when it rained?', 'How long is the trail?', 'What day trips did Sam take?', 'Whenever Jo paints, what does she hear?']) {
      expect(questionTime(q).asksTime, q).toBeUndefined()
    }
    expect(questionTime('When did she paint?', true).asksTime).toBe(true)
  })
})

describe('lastPeriod', () => {
  const newest = Date.parse('2023-08-10T15:00:00.000Z')
  it('ends after the day of the newest date and reaches back a week, month or year', () => {
    expect(lastPeriod('week', newest)).toEqual({ from: '2023-08-04T00:00:00.000Z', to: '2023-08-11T00:00:00.000Z' })
    expect(lastPeriod('month', newest)).toEqual({ from: '2023-07-11T00:00:00.000Z', to: '2023-08-11T00:00:00.000Z' })
    expect(lastPeriod('year', newest)).toEqual({ from: '2022-08-11T00:00:00.000Z', to: '2023-08-11T00:00:00.000Z' })
  })
})
