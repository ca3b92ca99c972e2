// Key -> slot maps built on first use: the same answers as a map filled at once, and a key
// listed twice refused every time the map is asked.
import { describe, expect, it } from 'vitest'
import { KeySlots } from '../../src/search/key-slots'

describe('key slots', () => {
  it('answers as a map of each key to its position plus the base, built only when asked', () => {
    const keys = ['b', 'a', 'c']
    const slots = new KeySlots(keys, 1)
    expect(slots.built).toBe(false)
    expect(slots.get('a')).toBe(2)
    expect(slots.built).toBe(true)
    expect([...slots]).toEqual([['b', 1], ['a', 2], ['c', 3]])
    slots.set('d', 4)
    slots.delete('b')
    expect(slots.size).toBe(3)
    expect([...slots.keys()]).toEqual(['a', 'c', 'd'])
    expect(new KeySlots().built).toBe(true)
  })

  it('builds before any read or change, so none sees a partial map', () => {
    const uses: [string, (m: KeySlots) => unknown, unknown][] = [
      ['has', (m) => m.has('y'), true],
      ['size', (m) => m.size, 2],
      ['set', (m) => (m.set('z', 9), [...m.values()]), [0, 1, 9]],
      ['delete', (m) => (m.delete('x'), [...m.entries()]), [['y', 1]]],
      ['forEach', (m) => { const seen: string[] = []; m.forEach((_, k) => seen.push(k)); return seen }, ['x', 'y']],
    ]
    for (const [, use, expected] of uses) expect(use(new KeySlots(['x', 'y']))).toEqual(expected)
    const cleared = new KeySlots(['x'])
    cleared.clear()
    expect(cleared.built).toBe(true)
    expect(cleared.size).toBe(0)
  })

  it('refuses a key listed twice with the error given, each time it is asked', () => {
    const slots = new KeySlots(['a', 'b', 'a'], 0, (key) => new Error(`twice: ${key}`))
    expect(() => slots.get('b')).toThrow('twice: a')
    expect(() => slots.size).toThrow('twice: a')
    expect(slots.built).toBe(false)
  })
})
