// A screen following a memory is refreshed once per run of changes, and while a first sync is
// arriving (a change after every piece, for minutes) only every few seconds.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { gatherChanges, REFRESH_GATHER_MS, REFRESH_WHILE_RECEIVING_MS } from '../../src/app/change-gather'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

/** Changes every `everyMs` for `forMs`, then as long again with none; how many refreshes came. */
function refreshesFor(receiving: boolean, everyMs: number, forMs: number): number {
  let fired = 0
  const gather = gatherChanges(() => fired++, () => receiving)
  for (let t = 0; t < forMs; t += everyMs) {
    gather.changed()
    vi.advanceTimersByTime(everyMs)
  }
  vi.advanceTimersByTime(forMs)
  gather.stop()
  return fired
}

describe('refreshing a screen as changes arrive', () => {
  it('refreshes once for changes close together, and again for the next run', () => {
    expect(refreshesFor(false, 10, 100)).toBe(1)
    let fired = 0
    const gather = gatherChanges(() => fired++, () => false)
    gather.changed()
    vi.advanceTimersByTime(REFRESH_GATHER_MS - 1)
    expect(fired).toBe(0)
    vi.advanceTimersByTime(1)
    expect(fired).toBe(1)
    gather.changed()
    vi.advanceTimersByTime(REFRESH_GATHER_MS)
    expect(fired).toBe(2)
  })

  it('while a first sync arrives, refreshes every few seconds instead of after nearly every piece', () => {
    // a piece applied every 200 ms for a minute
    const usual = refreshesFor(false, 200, 60_000)
    const receiving = refreshesFor(true, 200, 60_000)
    expect(usual).toBe(300)
    expect(receiving).toBe(60_000 / REFRESH_WHILE_RECEIVING_MS)
  })

  it('once stopped, refreshes nothing more', () => {
    let fired = 0
    const gather = gatherChanges(() => fired++, () => true)
    gather.changed()
    gather.stop()
    vi.advanceTimersByTime(REFRESH_WHILE_RECEIVING_MS * 2)
    expect(fired).toBe(0)
  })
})
