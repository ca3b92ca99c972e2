import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { MemoryError } from '../../src/core/errors'
import type { Observation } from '../../src/core/types'
import { ROOTS, memoryMaps } from '../../src/sync/layout'
import { applyMemoryWrites, createMemoryDoc, readFileBytes, readMemoryDoc } from '../../src/sync/memory-doc'
import { deleteFile, deleteObservation, putAlias, putFile, putObservation, putRejected, readObservation } from '../helpers/doc-writes'
import { observeMemoryDoc, type MemoryDocChange } from '../../src/sync/observe'
import { alias, fileMeta, observation } from './fixture'
import { MAX_FILE_BYTES } from '../../src/core/limits'

function recorder(doc: Y.Doc): MemoryDocChange[] {
  const seen: MemoryDocChange[] = []
  observeMemoryDoc(doc, (c) => seen.push(c))
  return seen
}

/** Sends everything `from` has that `to` lacks, as a peer would. */
function sync(from: Y.Doc, to: Y.Doc, origin: unknown = 'peer'): void {
  Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)), origin)
}

describe('memory document writes and reads', () => {
  it('stores observations as whole values and reads back copies', () => {
    const doc = createMemoryDoc()
    const obs = observation('a-1')
    putObservation(doc, obs)
    obs.title = 'changed by the caller afterwards'
    const read = readObservation(doc, 'a-1')
    expect(read?.title).toBe('Title of a-1')
    read!.tags.push('mutated')
    expect(readObservation(doc, 'a-1')?.tags).toEqual(['sync'])
    deleteObservation(doc, 'a-1')
    expect(readObservation(doc, 'a-1')).toBeNull()
  })

  it('rejects an invalid local write whole, naming the problem', () => {
    const doc = createMemoryDoc()
    const bad = { ...observation('b-1'), confidence: 7 }
    expect(() => applyMemoryWrites(doc, { observations: { put: [observation('ok-1'), bad] } })).toThrow(/confidence/)
    expect(readMemoryDoc(doc).observations.size).toBe(0)
    try {
      putObservation(doc, bad)
    } catch (err) {
      expect(err).toBeInstanceOf(MemoryError)
      expect((err as MemoryError).code).toBe('invalid_write')
    }
  })

  it('reads an entry equal to a known observation as that observation, and checks every other entry', () => {
    const doc = createMemoryDoc()
    const same = observation('same-1')
    const edited = observation('edited-1')
    putObservation(doc, same)
    putObservation(doc, { ...edited, content: 'edited on another device' })
    // a peer's value that fails its checks, where this memory holds a valid note of that slug
    memoryMaps(doc).observations.set('bad-1', { ...observation('bad-1'), title: 7 })
    // the memory's copy with its keys in another order is still the same note
    const mine = Object.fromEntries(Object.entries(same).reverse()) as unknown as Observation
    const known = new Map([[mine.slug, mine], [edited.slug, edited], ['bad-1', observation('bad-1')]])
    const snapshot = readMemoryDoc(doc, known)
    expect(snapshot.observations.get('same-1')).toBe(mine)
    expect(snapshot.observations.get('edited-1')).not.toBe(edited)
    expect(snapshot.observations.get('edited-1')?.content).toBe('edited on another device')
    expect(snapshot.observations.has('bad-1')).toBe(false)
    expect(snapshot.invalid.map((i) => i.key)).toEqual(['bad-1'])
    expect(readMemoryDoc(doc).observations.get('same-1')).toEqual(same)
  })

  it('keeps file bytes with their metadata and enforces the size limit', () => {
    const doc = createMemoryDoc()
    const bytes = new TextEncoder().encode('hello appendix')
    putFile(doc, fileMeta('docs/a.txt', bytes.byteLength), bytes)
    expect(new TextDecoder().decode(readFileBytes(doc, 'docs/a.txt')!)).toBe('hello appendix')
    expect(readMemoryDoc(doc).files.get('docs/a.txt')?.size).toBe(bytes.byteLength)
    const big = new Uint8Array(MAX_FILE_BYTES + 1)
    expect(() => putFile(doc, fileMeta('docs/big.bin', big.byteLength), big)).toThrow(MemoryError)
    expect(() => putFile(doc, fileMeta('docs/b.txt', 3), bytes)).toThrow(/size/)
    deleteFile(doc, 'docs/a.txt')
    expect(readFileBytes(doc, 'docs/a.txt')).toBeNull()
    expect(readMemoryDoc(doc).files.size).toBe(0)
  })
})

describe('observeMemoryDoc', () => {
  it('reports exactly the keys a local transaction changed, with its origin', () => {
    const doc = createMemoryDoc()
    putObservation(doc, observation('keep-1'))
    putObservation(doc, observation('gone-1'))
    const seen = recorder(doc)
    applyMemoryWrites(doc, {
      observations: { put: [observation('new-1'), observation('keep-1', { title: 'Edited' })], delete: ['gone-1'] },
      aliases: { put: [alias('acme inc', 'acme')] },
    }, 'engine')
    expect(seen).toHaveLength(1)
    const c = seen[0]!
    expect(c.origin).toBe('engine')
    expect(c.local).toBe(true)
    expect(c.observations.upserted.map((o) => o.slug).sort()).toEqual(['keep-1', 'new-1'])
    expect(c.observations.upserted.find((o) => o.slug === 'keep-1')?.title).toBe('Edited')
    expect(c.observations.deleted).toEqual(['gone-1'])
    expect(c.aliases.upserted).toEqual([alias('acme inc', 'acme')])
    expect(c.rejected.upserted).toEqual([])
    expect(c.invalid).toEqual([])
  })

  it('reports a remote merge as not local, and only the merged keys', () => {
    const a = createMemoryDoc()
    const b = createMemoryDoc()
    for (let i = 0; i < 5; i++) putObservation(a, observation(`s-${i}`))
    sync(a, b)
    const seen = recorder(b)
    putObservation(a, observation('s-2', { content: 'revised' }))
    deleteObservation(a, 's-4')
    putRejected(a, 'p1', { pair: ['x', 'y'], at: '2026-03-14T10:00:00.000Z' })
    putFile(a, fileMeta('f.txt', 2), new Uint8Array([1, 2]))
    sync(a, b, 'provider')
    expect(seen).toHaveLength(1)
    const c = seen[0]!
    expect(c.local).toBe(false)
    expect(c.origin).toBe('provider')
    expect(c.observations.upserted.map((o) => [o.slug, o.content])).toEqual([['s-2', 'revised']])
    expect(c.observations.deleted).toEqual(['s-4'])
    expect(c.rejected.upserted).toEqual([{ id: 'p1', value: { pair: ['x', 'y'], at: '2026-03-14T10:00:00.000Z' } }])
    expect(c.files.upserted.map((f) => f.path)).toEqual(['f.txt'])
    expect(c.fileBytes.upserted).toEqual(['f.txt'])
  })

  it('stays silent for a key added and removed in one transaction, and stops when asked', () => {
    const doc = createMemoryDoc()
    const seen: MemoryDocChange[] = []
    const stop = observeMemoryDoc(doc, (c) => seen.push(c))
    doc.transact(() => {
      doc.getMap(ROOTS.observations).set('tmp-1', observation('tmp-1'))
      doc.getMap(ROOTS.observations).delete('tmp-1')
    })
    expect(seen).toEqual([])
    stop()
    putObservation(doc, observation('after-1'))
    expect(seen).toEqual([])
  })

  it('reports malformed values from a peer as invalid and never throws', () => {
    const peer = new Y.Doc()
    const obsMap = peer.getMap(ROOTS.observations)
    peer.transact(() => {
      obsMap.set('ok-1', observation('ok-1'))
      obsMap.set('shape-1', { slug: 'shape-1', title: 42 })
      obsMap.set('proto-1', JSON.parse(`{"__proto__": {"polluted": true}, "slug": "proto-1"}`))
      obsMap.set('huge-1', observation('huge-1', { content: 'x'.repeat(1_000_000) }))
      obsMap.set('mismatch-1', observation('other-slug'))
      obsMap.set('extra-1', { ...observation('extra-1'), admin: true })
      obsMap.set('nested-1', observation('nested-1', { entities: [{ name: 'N', type: 't', description: 'd', queries: [{ deep: 1 }] }] as never }))
      peer.getMap(ROOTS.aliases).set('v', { variant: 'v', canonical: 5, createdAt: 'x' })
      peer.getMap(ROOTS.fileBytes).set('big.bin', new Uint8Array(MAX_FILE_BYTES + 1))
      peer.getMap(ROOTS.files).set('x.txt', 'not an object')
    })
    const local = createMemoryDoc()
    const seen = recorder(local)
    expect(() => sync(peer, local)).not.toThrow()
    const c = seen[0]!
    expect(c.observations.upserted.map((o) => o.slug)).toEqual(['ok-1'])
    const invalid = Object.fromEntries(c.invalid.map((i) => [`${i.map}:${i.key}`, i.reason]))
    expect(Object.keys(invalid).sort()).toEqual([
      'aliases:v', 'fileBytes:big.bin', 'files:x.txt',
      'observations:extra-1', 'observations:huge-1', 'observations:mismatch-1', 'observations:nested-1', 'observations:proto-1', 'observations:shape-1',
    ])
    expect(invalid['observations:huge-1']).toMatch(/limit/)
    // a field this version does not know is named, and the reason says a newer version may have written it
    expect(invalid['observations:extra-1']).toBe('observation has an unknown field "admin": this version of Cairn does not know it (a newer version may have written it), so the entry is left out')
    // the __proto__ key is ignored (as any re-encoding would drop it); the value is judged by its own fields
    expect(invalid['observations:proto-1']).toMatch(/title must be a string/)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const snapshot = readMemoryDoc(local)
    expect([...snapshot.observations.keys()]).toEqual(['ok-1'])
    expect(snapshot.invalid.length).toBe(8)
  })

  it('reads back only checked values of a mixed document', () => {
    const doc = createMemoryDoc()
    putAlias(doc, alias('ibm corp', 'ibm'))
    doc.getMap(ROOTS.aliases).set('__proto__', alias('__proto__', 'x'))
    const snap = readMemoryDoc(doc)
    expect([...snap.aliases.keys()]).toEqual(['ibm corp'])
    expect(snap.invalid.map((i) => i.key)).toEqual(['__proto__'])
  })
})
