import { describe, expect, it } from 'vitest'
import { Serial } from '../../src/core/serial'

const tick = () => new Promise((r) => setTimeout(r, 5))

describe('Serial', () => {
  it('runs tasks one at a time in call order, and a failure does not stop the next', async () => {
    const serial = new Serial()
    const log: string[] = []
    const a = serial.run(async () => { log.push('a start'); await tick(); log.push('a end') })
    const b = serial.run(async () => { log.push('b'); throw new Error('b failed') })
    const c = serial.run(async () => { log.push('c'); return 3 })
    await a
    await expect(b).rejects.toThrow('b failed')
    await expect(c).resolves.toBe(3)
    expect(log).toEqual(['a start', 'a end', 'b', 'c'])
  })

  it('idle waits for the tasks queued so far; drained also for those they queue', async () => {
    const serial = new Serial()
    const done: string[] = []
    void serial.run(async () => {
      await tick()
      done.push('first')
      // queued while the queue is being waited on
      void serial.run(async () => { await tick(); done.push('second') })
    })
    await serial.idle()
    expect(done).toEqual(['first'])
    await serial.drained()
    expect(done).toEqual(['first', 'second'])
  })
})
