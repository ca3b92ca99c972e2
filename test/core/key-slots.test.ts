// Key -> slot maps built on demand: the same answers as a map filled at once, whether a
// lookup scans the keys or the map was built, through sets and deletes; a key listed twice
// refused every time once the map is built.
import { describe, expect, it } from 'vitest'
import { KeySlots, mapSome } from '../../src/core/key-slots'

describe('key slots', () => {
  it('answers as a map of each key to its position plus the base, scanning the keys until asked often', () => {
    const slots = new KeySlots(['b', 'a', 'c'], 1)
    expect(slots.get('a')).toBe(2)
    expect(slots.has('z')).toBe(false)
    expect(slots.size).toBe(3)
    expect(slots.built).toBe(false)
    expect(slots.asRestored).toBe(true)
    for (let i = 0; i < 100; i++) slots.get('c')
    expect(slots.built).toBe(true)
    expect([...slots]).toEqual([['b', 1], ['a', 2], ['c', 3]])
    expect(slots.asRestored).toBe(true)
    expect(new KeySlots().built).toBe(true)
  })

  it('agrees with a plain map through random sets, deletes and lookups, before, while and after it is built', () => {
    let seed = 9
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`)
    const slots = new KeySlots(keys)
    const truth = new Map(keys.map((k, i) => [k, i]))
    for (let step = 0; step < 300; step++) {
      const key = `k${Math.floor(rand() * 40)}`
      const op = rand()
      // a part of the map built in idle time, now and then
      if (step > 5 && step % 4 === 0) slots.buildSome(2)
      if (op < 0.3) expect(slots.delete(key)).toBe(truth.delete(key))
      else if (op < 0.6) {
        slots.set(key, step)
        truth.set(key, step)
      } else expect(slots.get(key)).toBe(truth.get(key))
      expect(slots.has(key)).toBe(truth.has(key))
      expect(slots.size).toBe(truth.size)
      if (step === 10) expect(slots.built).toBe(false)
    }
    expect(slots.built).toBe(true)
    expect(slots.asRestored).toBe(false)
    expect(new Map(slots)).toEqual(truth)
  })

  it('builds before iterating, so none sees keys without their changes', () => {
    const slots = new KeySlots(['x', 'y', 'z'])
    slots.delete('y')
    slots.set('w', 7)
    expect(slots.asRestored).toBe(false)
    expect([...slots.entries()]).toEqual([['x', 0], ['z', 2], ['w', 7]])
    const seen: string[] = []
    new KeySlots(['p', 'q']).forEach((_, k) => seen.push(k))
    expect(seen).toEqual(['p', 'q'])
    const cleared = new KeySlots(['x'])
    cleared.clear()
    expect(cleared.size).toBe(0)
    expect(cleared.has('x')).toBe(false)
  })

  it('is built a part at a time, answering the same all along', () => {
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`)
    const slots = new KeySlots(keys, 1)
    slots.set('k3', 40)
    slots.delete('k7')
    const parts: boolean[] = []
    for (let i = 0; i < 4; i++) {
      parts.push(slots.buildSome(3))
      expect(keys.map((k) => slots.get(k))).toEqual([1, 2, 3, 40, 5, 6, 7, undefined, 9, 10])
    }
    expect(parts).toEqual([false, false, false, true])
    expect(slots.built).toBe(true)
    expect(slots.size).toBe(9)
  })

  it('refuses a key listed twice with the error given, each time the map is asked for whole', () => {
    const slots = new KeySlots(['a', 'b', 'a'], 0, (key) => new Error(`twice: ${key}`))
    expect(() => [...slots.keys()]).toThrow('twice: a')
    expect(() => [...slots.values()]).toThrow('twice: a')
    expect(() => slots.buildSome(5)).toThrow('twice: a')
    expect(slots.built).toBe(false)
    expect(mapSome(5, new Map(), slots)).toBe(true)
  })
})
