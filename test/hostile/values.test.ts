// A peer with a valid read_write token writes what no Cairn device writes: deep arrays in a
// root map's list part, shared types where JSON values belong, huge keys, and look-alike
// replacements of existing entries. The promise: each is refused, the room holds none of
// it, it still loads after a restart, and a device that joins later gets every entry whole.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { ROOTS } from '../../src/sync/layout'
import { readFileBytes, readMemoryDoc } from '../../src/sync/memory-doc'
import { putFile, putObservation, readObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { fileMeta, observation, waitFor } from '../sync/fixture'
import { refusedAs, send, sendRaw, slugs } from './peer'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

/** An update that a separate document makes, so it starts a client id of its own. */
function madeBy(edit: (doc: Y.Doc) => void): Uint8Array {
  const doc = new Y.Doc()
  edit(doc)
  return Y.encodeStateAsUpdate(doc)
}

function nested(depth: number): unknown {
  let v: unknown = []
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

/** The owner's memory: one observation and one file, written by a full device. */
async function seeded() {
  const owner = h.client('mem-1', h.token('mem-1', 'full', 'owner').token)
  await owner.whenSynced()
  putObservation(owner.provider.doc, observation('kept-1'))
  putFile(owner.provider.doc, fileMeta('docs/a.txt', 3), new Uint8Array([1, 2, 3]))
  const attacker = h.client('mem-1', h.token('mem-1', 'read_write', 'attacker').token)
  await attacker.whenSynced()
  await waitFor('the seed on the attacker', () => slugs(attacker.provider.doc).includes('kept-1') && readFileBytes(attacker.provider.doc, 'docs/a.txt') !== null)
  return { owner, attacker }
}

async function joinsWhole(): Promise<Y.Doc> {
  const fresh = h.client('mem-1', h.token('mem-1', 'read', 'late').token)
  await fresh.whenSynced()
  const doc = fresh.provider.doc
  expect(readObservation(doc, 'kept-1')).toEqual(observation('kept-1'))
  expect(readFileBytes(doc, 'docs/a.txt')).toEqual(new Uint8Array([1, 2, 3]))
  expect(readMemoryDoc(doc).invalid).toEqual([])
  return doc
}

describe('values a reader would reject never reach the room', () => {
  it('the list part of a root map, nested shared types and oversized keys are refused; the room loads after a restart', { timeout: 90_000 }, async () => {
    const { attacker } = await seeded()
    // too deep for this process to decode, so it goes out as raw bytes: the server must not choke on it either
    sendRaw(attacker, madeBy((d) => d.getArray(ROOTS.observations).insert(0, [nested(6_000)])))
    expect(await refusedAs(attacker, 1)).toBe('malformed')
    const attacks: Array<[string, Uint8Array]> = [
      ['a 1,000-deep array in the list part of observations', madeBy((d) => d.getArray(ROOTS.observations).insert(0, [nested(1_000)]))],
      ['1 MB of JSON in the list part of observations', madeBy((d) => d.getArray(ROOTS.observations).insert(0, [{ junk: 'x'.repeat(1_000_000) }]))],
      ['a Y.Map under aliases', madeBy((d) => {
        const inner = new Y.Map<unknown>()
        d.getMap(ROOTS.aliases).set('acme', inner)
        inner.set('variant', 'acme')
      })],
      ['a 1,000,000-character key in rejected', madeBy((d) => d.getMap(ROOTS.rejected).set('k'.repeat(1_000_000), { pair: ['a', 'b'], at: '2026-03-14T09:30:00.000Z' }))],
      ['a 1 MB key in fileBytes', madeBy((d) => d.getMap(ROOTS.fileBytes).set('p'.repeat(1_000_000), new Uint8Array([1])))],
      ['a JSON value in fileBytes', madeBy((d) => d.getMap(ROOTS.fileBytes).set('docs/b.txt', { 0: 1 }))],
    ]
    let n = 1
    for (const [what, update] of attacks) {
      send(attacker, update)
      expect({ what, code: await refusedAs(attacker, ++n) }).toEqual({ what, code: 'invalid_value' })
    }
    const state = (await h.server.roomState('mem-1'))!
    expect(state.byteLength).toBeLessThan(10_000)
    await h.restart()
    const doc = await joinsWhole()
    expect(doc.getMap(ROOTS.observations)._start).toBeNull()
    expect(slugs(doc)).toEqual(['kept-1'])
  })

  it('look-alike replacements of an existing observation or file are refused for read_write', async () => {
    const { attacker } = await seeded()
    const observations = attacker.provider.doc.getMap(ROOTS.observations)
    // serializes like the original (JSON drops undefined), but readers reject the extra field
    observations.set('kept-1', { ...observation('kept-1'), x: undefined })
    expect(await refusedAs(attacker, 1)).toBe('invalid_value')
    const other = h.client('mem-1', h.token('mem-1', 'read_write', 'attacker-2').token)
    await other.whenSynced()
    await waitFor('the file on the second attacker', () => readFileBytes(other.provider.doc, 'docs/a.txt') !== null)
    // a plain object whose JSON equals the bytes' JSON
    other.provider.doc.getMap(ROOTS.fileBytes).set('docs/a.txt', { 0: 1, 1: 2, 2: 3 })
    expect(await refusedAs(other, 1)).toBe('invalid_value')
    await joinsWhole()
  })

  it('a full token may edit, but only with values readers accept', async () => {
    const { owner } = await seeded()
    owner.provider.doc.getMap(ROOTS.observations).set('kept-1', { ...observation('kept-1'), x: undefined })
    expect(await refusedAs(owner, 1)).toBe('invalid_value')
    await joinsWhole()
  })
})

describe('awareness', () => {
  it('is not relayed: a read token\'s 2 MB presence state never reaches another peer', async () => {
    const reader = h.client('mem-1', h.token('mem-1', 'read', 'reader').token)
    const peer = h.client('mem-1', h.token('mem-1', 'read', 'peer').token)
    await Promise.all([reader.whenSynced(), peer.whenSynced()])
    reader.provider.awareness.setLocalState({ junk: 'x'.repeat(2_000_000) })
    // a write from a third device after it: once that arrives, the awareness would have too
    const writer = h.client('mem-1', h.token('mem-1', 'read_write', 'writer').token)
    await writer.whenSynced()
    putObservation(writer.provider.doc, observation('after-1'))
    await waitFor('the write on the peer', () => slugs(peer.provider.doc).includes('after-1'))
    expect([...peer.provider.awareness.getStates().keys()]).not.toContain(reader.provider.doc.clientID)
  })
})

