// The shapes of Yjs beyond its documented API that src/sync/yjs-internals.ts relies on. A Yjs
// release that changes one of them fails here, by name, rather than somewhere in a sync.
import * as decoding from 'lib0/decoding'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { clockTotal, CONTENT_BINARY, sameClocks, decodeUpdate, dependenciesOf, SKIP_INFO, structsOf, writeStruct } from '../../src/sync/yjs-internals'

function sample(): Y.Doc {
  const doc = new Y.Doc()
  doc.clientID = 7
  const observations = doc.getMap('observations')
  observations.set('a', { title: 'a' })
  const nested = new Y.Map<unknown>()
  observations.set('nested', nested)
  nested.set('inner', 1)
  observations.set('b', { title: 'b' })
  observations.delete('a')
  doc.getMap('fileBytes').set('f', new Uint8Array([1, 2, 3]))
  return doc
}

describe('the Yjs internals the sync layer reads', () => {
  it('a document keeps each client’s structs in clock order, with ids and lengths', () => {
    const doc = sample()
    const structs = structsOf(doc)
    expect(structs).toBeInstanceOf(Map)
    const mine = structs.get(7)!
    expect(Array.isArray(mine)).toBe(true)
    expect(mine.length).toBeGreaterThan(3)
    let clock = 0
    for (const s of mine) {
      expect(s instanceof Y.Item || s instanceof Y.GC).toBe(true)
      expect(s.id).toBeInstanceOf(Y.ID)
      expect(s.id.client).toBe(7)
      expect(s.id.clock).toBe(clock)
      expect(typeof s.length).toBe('number')
      clock += s.length
    }
    expect(clock).toBe(Y.decodeStateVector(Y.encodeStateVector(doc)).get(7))
  })

  it('the clock total is the state vector summed, and changes with new structs only', () => {
    const doc = sample()
    const other = new Y.Doc()
    other.clientID = 9
    other.getMap('observations').set('c', { title: 'c' })
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other))
    const summed = () => [...Y.decodeStateVector(Y.encodeStateVector(doc)).values()].reduce((a, b) => a + b, 0)
    expect(clockTotal(doc)).toBe(summed())
    const before = clockTotal(doc)
    // a deletion adds no struct; an update sent again adds none either
    doc.getMap('observations').delete('b')
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other))
    expect(clockTotal(doc)).toBe(before)
    doc.getMap('observations').set('d', 1)
    expect(clockTotal(doc)).toBe(summed())
    expect(clockTotal(doc)).toBeGreaterThan(before)
    expect(clockTotal(new Y.Doc())).toBe(0)
  })

  it('two documents have the same clocks exactly when their state vectors are equal', () => {
    const a = sample()
    const b = new Y.Doc()
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    const vectorsEqual = () => Buffer.from(Y.encodeStateVector(a)).equals(Buffer.from(Y.encodeStateVector(b)))
    expect(sameClocks(a, b)).toBe(true)
    expect(vectorsEqual()).toBe(true)
    // a deletion moves no clock
    a.getMap('observations').delete('b')
    expect(sameClocks(a, b)).toBe(vectorsEqual())
    expect(sameClocks(a, b)).toBe(true)
    // the same sum of clocks spread over other clients is not the same state
    const c = new Y.Doc()
    c.clientID = 8
    c.getMap('observations').set('x', 1)
    const d = new Y.Doc()
    d.clientID = 9
    d.getMap('observations').set('y', 2)
    expect(clockTotal(c)).toBe(clockTotal(d))
    expect(sameClocks(c, d)).toBe(false)
    b.getMap('observations').set('e', 1)
    expect(sameClocks(a, b)).toBe(vectorsEqual())
    expect(sameClocks(a, b)).toBe(false)
    expect(sameClocks(b, a)).toBe(false)
  })

  it('an item of a nested type depends on the item its type lives in; a root type’s on none', () => {
    const doc = sample()
    const items = structsOf(doc).get(7)!.filter((s): s is Y.Item => s instanceof Y.Item)
    const inner = items.find((i) => i.parentSub === 'inner')!
    const holder = items.find((i) => i.parentSub === 'nested')!
    expect(inner.parent).toBeInstanceOf(Y.AbstractType)
    expect((inner.parent as unknown as { _item: Y.Item })._item).toBe(holder)
    expect(dependenciesOf(inner)).toContainEqual(holder.id)
    expect((holder.parent as unknown as { _item: Y.Item | null })._item).toBeNull()
    expect(dependenciesOf(holder).every((id) => id instanceof Y.ID)).toBe(true)
  })

  it('a decoded update gives its structs (parents as ids or root names) and its delete set by client', () => {
    const doc = sample()
    const { structs, ds } = decodeUpdate(Y.encodeStateAsUpdate(doc))
    expect(structs.length).toBeGreaterThan(3)
    const inner = structs.find((s): s is Y.Item => s instanceof Y.Item && s.parentSub === 'inner')!
    expect(inner.parent).toBeInstanceOf(Y.ID)
    expect(dependenciesOf(inner)).toContainEqual(inner.parent)
    const root = structs.find((s): s is Y.Item => s instanceof Y.Item && s.parentSub === 'b')!
    expect(typeof root.parent).toBe('string')
    expect(ds.clients).toBeInstanceOf(Map)
    const ranges = ds.clients.get(7)!
    expect(ranges.length).toBeGreaterThan(0)
    for (const r of ranges) expect(Object.keys(r).sort()).toEqual(['clock', 'len'])
  })

  it('one struct written in the V1 format is an update of that struct alone', () => {
    const doc = sample()
    const { structs } = decodeUpdate(Y.encodeStateAsUpdate(doc))
    const first = structs[0]!
    const e = new Y.UpdateEncoderV1()
    const length = writeStruct(e, first)
    const body = e.toUint8Array()
    expect(length).toBe(body.byteLength)
    // header: one client, one struct, its client and clock; then the struct; then no deletions
    const update = new Uint8Array([1, 1, 7, first.id.clock, ...body, 0])
    const again = decodeUpdate(update).structs
    expect(again).toHaveLength(1)
    expect(again[0]!.id).toEqual(first.id)
  })

  it('binary content and skips carry the V1 refs the splitter reads', () => {
    const doc = new Y.Doc()
    doc.clientID = 3
    doc.getMap('fileBytes').set('f', new Uint8Array([9]))
    const update = Y.encodeStateAsUpdate(doc)
    const d = decoding.createDecoder(update)
    expect([decoding.readVarUint(d), decoding.readVarUint(d), decoding.readVarUint(d), decoding.readVarUint(d)]).toEqual([1, 1, 3, 0])
    expect(decoding.readUint8(d) & 0b11111).toBe(CONTENT_BINARY)
    // a gap in a client's clocks is a skip: info SKIP_INFO, then its length
    const e = new Y.UpdateEncoderV1()
    writeStruct(e, decodeUpdate(update).structs[0]!)
    const gapped = new Uint8Array([1, 2, 3, 0, SKIP_INFO, 5, ...e.toUint8Array(), 0])
    const [skip, item] = decodeUpdate(gapped).structs
    expect(skip).toBeInstanceOf(Y.Skip)
    expect(skip!.length).toBe(5)
    expect(item).toBeInstanceOf(Y.Item)
    expect(item!.id.clock).toBe(5)
  })
})
