// A large update split into pieces: every piece fits the server's limits (or is one struct),
// integrates on arrival at a receiver that holds what the sender assumed, and together they
// give the same document as the whole update.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { fitsOneMessage, MAX_UPDATE_BYTES, singleStructContent, splitUpdate } from '../../src/sync/update-split'

type Op =
  | { kind: 'set'; doc: number; map: string; key: string; text: string }
  | { kind: 'delete'; doc: number; map: string; key: string }
  | { kind: 'bytes'; doc: number; key: string; size: number }
  | { kind: 'sync'; from: number; to: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), doc: fc.nat(2), map: fc.constantFrom('observations', 'aliases'), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), text: fc.string({ maxLength: 400, unit: 'binary' }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), doc: fc.nat(2), map: fc.constantFrom('observations', 'aliases'), key: fc.constantFrom('a', 'b', 'c', 'd') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bytes' as const), doc: fc.nat(2), key: fc.constantFrom('x', 'y'), size: fc.integer({ min: 0, max: 3_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('sync' as const), from: fc.nat(2), to: fc.nat(2) }) },
)

function run(ops: Op[]): Y.Doc[] {
  const docs = [1, 2, 3].map((client) => {
    const d = new Y.Doc()
    d.clientID = client
    return d
  })
  for (const o of ops) {
    if (o.kind === 'set') docs[o.doc]!.getMap(o.map).set(o.key, { text: o.text, at: o.key })
    else if (o.kind === 'delete') docs[o.doc]!.getMap(o.map).delete(o.key)
    else if (o.kind === 'bytes') docs[o.doc]!.getMap('fileBytes').set(o.key, new Uint8Array(o.size).fill(7))
    else if (o.from !== o.to) Y.applyUpdate(docs[o.to]!, Y.encodeStateAsUpdate(docs[o.from]!))
  }
  return docs
}

const state = (d: Y.Doc) => JSON.stringify(['observations', 'aliases', 'fileBytes'].map((m) => d.getMap(m).toJSON()))

describe('splitting an update', () => {
  it('gives pieces within the limit that integrate one by one into the same document', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 200, max: 4_000 }), fc.nat(2), (ops, maxBytes, receiverIndex) => {
        const docs = run(ops)
        // the receiver holds its own state; the sender (doc 0) sends what the receiver lacks
        const receiver = new Y.Doc()
        Y.applyUpdate(receiver, Y.encodeStateAsUpdate(docs[receiverIndex]!))
        const update = Y.encodeStateAsUpdate(docs[0]!, Y.encodeStateVector(receiver))
        const pieces = splitUpdate(update, maxBytes)
        const whole = new Y.Doc()
        Y.applyUpdate(whole, Y.encodeStateAsUpdate(receiver))
        Y.applyUpdate(whole, update)
        for (const piece of pieces) {
          expect(piece.byteLength <= maxBytes || singleStructContent(piece) !== null).toBe(true)
          Y.applyUpdate(receiver, piece)
          // nothing waits on a later piece
          expect(receiver.store.pendingStructs).toBeNull()
          expect(receiver.store.pendingDs).toBeNull()
        }
        expect(state(receiver)).toBe(state(whole))
        expect(Y.encodeStateVector(receiver)).toEqual(Y.encodeStateVector(whole))
      }),
      { numRuns: 150, seed: 12 },
    )
  })

  it('returns an update that fits as it is', () => {
    const d = new Y.Doc()
    d.getMap('observations').set('a', { text: 'short' })
    const update = Y.encodeStateAsUpdate(d)
    expect(splitUpdate(update, 1_000)).toEqual([update])
  })

  it('sends a file larger than the limit alone, and the server limits take it', () => {
    const d = new Y.Doc()
    d.transact(() => {
      d.getMap('files').set('big.bin', { path: 'big.bin' })
      d.getMap('fileBytes').set('big.bin', new Uint8Array(2 * 1024 * 1024).fill(1))
      for (let i = 0; i < 20; i++) d.getMap('observations').set(`n${i}`, { text: 'y'.repeat(20_000) })
    })
    const pieces = splitUpdate(Y.encodeStateAsUpdate(d))
    expect(pieces.length).toBeGreaterThan(2)
    for (const piece of pieces) expect(fitsOneMessage(piece)).toBe(true)
    const big = pieces.filter((p) => p.byteLength > MAX_UPDATE_BYTES)
    expect(big).toHaveLength(1)
    expect(singleStructContent(big[0]!)).toBe(3)
    const receiver = new Y.Doc()
    for (const piece of pieces) Y.applyUpdate(receiver, piece)
    expect((receiver.getMap("fileBytes").get("big.bin") as Uint8Array).every((b) => b === 1)).toBe(true)
    expect(receiver.getMap('observations').size).toBe(20)
  })

  it('refuses, by size alone, an update of many structs over the limit', () => {
    const d = new Y.Doc()
    for (let i = 0; i < 30; i++) d.getMap('observations').set(`n${i}`, { text: 'y'.repeat(20_000) })
    const update = Y.encodeStateAsUpdate(d)
    expect(update.byteLength).toBeGreaterThan(MAX_UPDATE_BYTES)
    expect(fitsOneMessage(update)).toBe(false)
  })
})
