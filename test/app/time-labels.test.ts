// How the app words world time: whole days as written, intervals half-open in words, and a
// supersession proposal as "X replaces Y from <date>".
import { describe, expect, it } from 'vitest'
import { intervalLabel, supersessionLabel, worldDate } from '../../src/app/parts/time-labels'

describe('time labels', () => {
  it('shows a whole UTC day as the date written, and anything else as a local time', () => {
    expect(worldDate('2024-01-15T00:00:00.000Z')).toBe('2024-01-15')
    expect(worldDate('2024-01-15')).toBe('2024-01-15')
    expect(worldDate('2024-01-15T09:30:00Z')).toBe(new Date('2024-01-15T09:30:00Z').toLocaleString())
    expect(worldDate('not a date')).toBe('not a date')
  })

  it('words an interval by the ends it has', () => {
    expect(intervalLabel({ validFrom: '2020-03-01T00:00:00.000Z', validTo: '2024-01-15T00:00:00.000Z' })).toBe('from 2020-03-01 to 2024-01-15')
    expect(intervalLabel({ validFrom: '2020-03-01T00:00:00.000Z' })).toBe('from 2020-03-01')
    expect(intervalLabel({ validTo: '2024-01-15T00:00:00.000Z' })).toBe('until 2024-01-15')
    expect(intervalLabel({})).toBe('')
  })

  it('says what a supersession replaces, and from when', () => {
    const d = { older: 'a', newer: 'b', source: 'Dana', type: 'works_at', targets: ['Acme', 'Beta'] as [string, string] }
    expect(supersessionLabel({ ...d, from: '2024-01-15T00:00:00.000Z' })).toBe('Dana works at Beta replaces Dana works at Acme from 2024-01-15')
    expect(supersessionLabel(d)).toBe('Dana works at Beta replaces Dana works at Acme')
  })
})
