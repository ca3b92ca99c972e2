// Many sockets sending at once: each handles one message per turn of the event loop, and all
// of them together stop handling once a slice of the turn is spent, so the loop gets to its
// timers and I/O (a health check) between, instead of after every socket's message.
import { describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import { DEFAULT_BUDGET, LOOP_SLICE_MS, newBudgetWindow, PacedReader } from '../../src/server/connection-budget'

/** What the reader uses of a socket. */
const socket = () => ({ OPEN: 1, readyState: 1, pause() {}, resume() {} }) as unknown as WebSocket

/** Occupies the thread, as judging a large message does. */
function work(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // busy
  }
}

describe('sockets sharing the event loop', () => {
  it('yield to the loop once their turn\'s slice is spent: a timer due meanwhile runs before the next socket\'s message', async () => {
    const order: string[] = []
    const readers = ['a', 'b', 'c'].map((name) => new PacedReader(socket(), DEFAULT_BUDGET, newBudgetWindow(DEFAULT_BUDGET), () => {
      order.push(name)
      // the first message schedules a timer, due long before its handling ends
      if (name === 'a') setTimeout(() => order.push('timer'), 0)
      work(LOOP_SLICE_MS + 5)
    }, () => false))
    for (const r of readers) r.push(new Uint8Array([0]))
    await new Promise((resolve) => setTimeout(resolve, 200))
    while (readers.some((r) => r.waiting > 0)) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(order).toEqual(['a', 'timer', 'b', 'c'])
  })
})
