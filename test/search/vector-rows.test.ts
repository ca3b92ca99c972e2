// Flat int8 vector rows: what is stored is within half a step of what was given, a scan agrees
// with float dot products over the stored values, and rows survive removal, moves and a reload.
import { describe, expect, it } from 'vitest'
import { simdAvailable } from '../../src/search/int8-dots'
import { quantizeInto, VectorRows } from '../../src/search/vector-rows'

const D = 24
function randomVector(seed: number): Float32Array {
  let s = seed >>> 0
  const v = Float32Array.from({ length: D }, () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) - 0.5)
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, i) => s + x * b[i]!, 0)

describe('vector rows', () => {
  it('stores each value within half a step of its row scale; a zero vector stays zero', () => {
    for (let seed = 1; seed < 50; seed++) {
      const v = randomVector(seed).map((x) => x * seed) // scale is per row: any norm keeps its precision
      const q = new Int8Array(D)
      const scale = quantizeInto(v, q, 0)
      expect(Math.max(...Array.from(q, Math.abs))).toBe(127)
      v.forEach((x, i) => expect(Math.abs(q[i]! * scale - x)).toBeLessThanOrEqual(scale / 2 + 1e-6 * Math.abs(x)))
    }
    const zero = new Int8Array(D).fill(5)
    expect(quantizeInto(new Float32Array(D), zero, 0)).toBe(0)
    expect([...zero]).toEqual(new Array(D).fill(0))
  })

  it('bestDot is the best dot product of a slot\'s stored rows with a vector, 0 for a slot with none', () => {
    const rows = new VectorRows(D)
    rows.set(0, [randomVector(1), randomVector(2)])
    rows.set(1, [])
    const v = randomVector(3)
    const stored = rows.vectorsOf(0)
    expect(rows.bestDot(0, v)).toBeCloseTo(Math.max(0, dot(stored[0]!, v), dot(stored[1]!, v)), 5)
    expect(rows.bestDot(1, v)).toBe(0)
  })

  it('scans as a float dot product over the stored values, the best row per slot', () => {
    const rows = new VectorRows(D, 2)
    const vectors = Array.from({ length: 30 }, (_, i) => randomVector(i + 100))
    for (let slot = 0; slot < 10; slot++) rows.set(slot, vectors.slice(slot * 3, slot * 3 + 1 + (slot % 3)))
    const query = randomVector(999)
    const got = new Float32Array(10).fill(-Infinity)
    rows.maxSimilarity(query, got)
    for (let slot = 0; slot < 10; slot++) {
      const stored = rows.vectorsOf(slot)
      expect(stored).toHaveLength(1 + (slot % 3))
      const best = Math.max(...stored.map((v) => dot(v, query)))
      expect(got[slot]).toBeCloseTo(best, 4) // the query is int16: 65k levels
      // and close to the unrounded vectors: 127 levels lose little of a cosine
      const exact = Math.max(...vectors.slice(slot * 3, slot * 3 + 1 + (slot % 3)).map((v) => dot(v, query)))
      expect(Math.abs(got[slot]! - exact)).toBeLessThan(0.02)
    }
    expect(rows.bytes).toBe(rows.rows * (32 + 4)) // 24 values padded to 32 for SIMD, and a float scale
  })

  it('keeps rows with their slot through clears, moves and an export and reload', () => {
    const rows = new VectorRows(D)
    for (let slot = 0; slot < 6; slot++) rows.set(slot, [randomVector(slot), randomVector(slot + 50)])
    rows.clear(1)
    rows.move(5, 1) // the caller keeps slots dense
    rows.set(2, [randomVector(77)])
    const query = randomVector(3)
    const before = new Float32Array(5)
    rows.maxSimilarity(query, before)
    const saved = rows.export(5)
    expect([...saved.rowCounts]).toEqual([2, 2, 1, 2, 2])
    const reloaded = new VectorRows(D)
    reloaded.load(saved)
    const after = new Float32Array(5)
    reloaded.maxSimilarity(query, after)
    expect([...after]).toEqual([...before])
    for (let slot = 0; slot < 5; slot++) expect(reloaded.vectorsOf(slot)).toEqual(rows.vectorsOf(slot))
    expect(() => reloaded.load(saved)).toThrow()
  })

  it('a loaded instance changed afterwards holds and scans what the instance it came from holds, changed the same way', () => {
    let seed = 11
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32
    const original = new VectorRows(D)
    let slots = 40
    for (let slot = 0; slot < slots; slot++) original.set(slot, Array.from({ length: 1 + Math.floor(rand() * 2) }, () => randomVector(Math.floor(rand() * 1e6))))
    const loaded = new VectorRows(D)
    loaded.load(original.export(slots))
    for (let step = 0; step < 200; step++) {
      const slot = Math.floor(rand() * slots)
      const op = rand()
      for (const rows of [original, loaded]) {
        if (op < 0.4) rows.set(slot, Array.from({ length: 1 + (step % 3) }, (_, i) => randomVector(step * 7 + i)))
        else if (op < 0.7) {
          // a removal as the indexes do it: the last slot moves into the hole
          rows.clear(slot)
          if (slot !== slots - 1) rows.move(slots - 1, slot)
        } else if (op < 0.8) rows.clear(slot)
        else rows.set(slots, [randomVector(step)])
      }
      if (op >= 0.4 && op < 0.7) slots--
      else if (op >= 0.8) slots++
      {
        for (let s = 0; s < slots; s++) expect(loaded.vectorsOf(s)).toEqual(original.vectorsOf(s))
        const query = randomVector(step + 5)
        const [a, b] = [new Float32Array(slots), new Float32Array(slots)]
        original.maxSimilarity(query, a)
        loaded.maxSimilarity(query, b)
        expect([...b]).toEqual([...a])
        expect(loaded.rows).toBe(original.rows)
      }
    }
    expect(loaded.export(slots)).toEqual(original.export(slots))
  })

  it('refuses a vector of another length and keeps the rows the slot had', () => {
    const rows = new VectorRows(D)
    rows.set(0, [randomVector(1)])
    expect(() => rows.set(0, [randomVector(2), new Float32Array(D + 1)])).toThrow(RangeError)
    expect(rows.rows).toBe(1)
    expect(rows.vectorsOf(0)[0]!.every((x, i) => Math.abs(x - randomVector(1)[i]!) < 0.01)).toBe(true)
  })

  it('scans on SIMD here, with the same scores as the JavaScript loop, dimensions not a multiple of 16 included', () => {
    expect(simdAvailable()).toBe(true)
    const simd = new VectorRows(D)
    const js = new VectorRows(D, 64, { simd: false })
    for (let slot = 0; slot < 200; slot++) {
      const rows = [randomVector(slot * 3 + 1), randomVector(slot * 3 + 2)].slice(0, 1 + (slot % 2))
      simd.set(slot, rows)
      js.set(slot, rows)
    }
    for (const target of [simd, js]) target.clear(17)
    for (let q = 0; q < 5; q++) {
      const query = randomVector(5000 + q)
      const a = new Float32Array(200)
      const b = new Float32Array(200)
      simd.maxSimilarity(query, a)
      js.maxSimilarity(query, b)
      expect([...a]).toEqual([...b])
      expect(a.some((x) => x > 0.3)).toBe(true)
    }
  })
})
