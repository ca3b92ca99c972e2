import { afterEach, describe, expect, it, vi } from 'vitest'
import { taskScheduler } from '../../src/engine/next-task'

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

// Node takes the setImmediate path; browsers (no setImmediate) the MessageChannel one
describe.each([
  ['setImmediate', false],
  ['MessageChannel', true],
])('taskScheduler through %s', (_name, hideImmediate) => {
  afterEach(() => vi.unstubAllGlobals())

  it('runs each callback later, in a task of its own, in the order given', async () => {
    if (hideImmediate) vi.stubGlobal('setImmediate', undefined)
    const tasks = taskScheduler()
    const seen: string[] = []
    tasks.run(() => seen.push('a'))
    tasks.run(() => {
      seen.push('b')
      // one scheduled from inside a task comes after those already queued
      tasks.run(() => seen.push('d'))
    })
    tasks.run(() => seen.push('c'))
    await Promise.resolve()
    expect(seen).toEqual([])
    await settle()
    expect(seen).toEqual(['a', 'b', 'c', 'd'])
    tasks.close()
  })

  it('drops what is still scheduled when closed', async () => {
    if (hideImmediate) vi.stubGlobal('setImmediate', undefined)
    const tasks = taskScheduler()
    const seen: number[] = []
    tasks.run(() => seen.push(1))
    tasks.close()
    await settle()
    expect(seen).toEqual([])
  })
})
