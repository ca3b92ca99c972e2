// The filters the Notes and Recall screens share become a request's fields the same way.
import { describe, expect, it } from 'vitest'
import { noteFilters } from '../../src/app/parts/graph-form'

const blank = { category: '', tags: '', from: '', to: '', entity: '' }

describe('noteFilters', () => {
  it('leaves every blank filter out', () => {
    expect(noteFilters(blank)).toEqual({})
    expect(noteFilters({ ...blank, category: '  ', tags: ' , ,', entity: ' ' })).toEqual({})
  })

  it('trims what is typed and splits tags at commas', () => {
    expect(noteFilters({ category: ' work ', tags: 'a, b ,,c', from: '2026-01-01', to: '2026-02-01', entity: ' Ada Park ' })).toEqual({
      category: 'work',
      tags: ['a', 'b', 'c'],
      from: '2026-01-01',
      to: '2026-02-01',
      entity: 'Ada Park',
    })
  })
})
