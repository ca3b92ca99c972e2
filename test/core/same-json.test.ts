// sameJson stands in for comparing JSON texts when a memory's notes are compared with their
// sync document's copies: it must agree with a key-order-free JSON comparison on every value.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sameJson } from '../../src/core/same-json'

/** JSON text with every object's keys sorted (undefined-valued keys dropped, as JSON does). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  )
}

/** The same value with each object's keys in another order. */
function reordered(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => reordered(v, seed + i))
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
    const turned = entries.length ? seed % entries.length : 0
    return Object.fromEntries([...entries.slice(turned), ...entries.slice(0, turned)].map(([k, v], i) => [k, reordered(v, seed + i + 1)]))
  }
  return value
}

// no -0 or NaN: JSON writes them as other values, which the notes never hold
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.option(tie('value'), { nil: undefined }), { maxKeys: 4 }),
  ),
})).value

describe('sameJson', () => {
  it('agrees with comparing key-sorted JSON texts', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(sameJson(a, b)).toBe(canonical(a) === canonical(b))
      }),
      { numRuns: 2000 },
    )
  })

  it('ignores key order and undefined keys, and sees any one change', () => {
    fc.assert(
      fc.property(json, fc.nat(), (a, seed) => {
        const b = reordered(a, seed)
        expect(sameJson(a, b)).toBe(true)
        expect(sameJson(b, a)).toBe(true)
        expect(sameJson(a, structuredClone(a))).toBe(true)
      }),
      { numRuns: 1000 },
    )
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true)
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false)
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false)
    expect(sameJson({ a: { b: 'x' } }, { a: { b: 'y' } })).toBe(false)
    expect(sameJson([], {})).toBe(false)
    expect(sameJson({ 0: 'a' }, ['a'])).toBe(false)
    expect(sameJson('1', 1)).toBe(false)
  })

  it('takes no bytes, dates or class instances for a plain value', () => {
    expect(sameJson(new Uint8Array([1]), new Uint8Array([1]))).toBe(false)
    expect(sameJson(new Uint8Array([1]), { 0: 1 })).toBe(false)
    expect(sameJson(new Date(0), new Date(0))).toBe(false)
    expect(sameJson(new Map(), {})).toBe(false)
    const shared = new Date(0)
    expect(sameJson(shared, shared)).toBe(true)
    expect(sameJson(Object.create(null) as object, {})).toBe(true)
  })
})
