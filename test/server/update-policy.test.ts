import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { checkUpdate, noteLoadedState } from '../../src/server/update-policy'
import { ROOTS } from '../../src/sync/layout'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { deleteObservation, putAlias, putObservation, putRejected } from '../helpers/doc-writes'
import { alias, observation } from '../sync/fixture'

/** A room holding two observations, and a client document that starts as a copy of it. */
function setup(): { room: Y.Doc; client: Y.Doc } {
  const room = createMemoryDoc()
  putObservation(room, observation('a-1'))
  putObservation(room, observation('b-1'))
  putAlias(room, alias('v', 'c'))
  putRejected(room, 'p-1', { pair: ['x', 'y'], at: '2026-03-14T10:00:00.000Z' })
  const client = createMemoryDoc()
  Y.applyUpdate(client, Y.encodeStateAsUpdate(room))
  return { room, client }
}

function changeOf(client: Y.Doc, room: Y.Doc, edit: (doc: Y.Doc) => void): Uint8Array {
  edit(client)
  return Y.encodeStateAsUpdate(client, Y.encodeStateVector(room))
}

describe('checkUpdate', () => {
  it('lets a read connection send what the room already has (a reconnect handshake)', () => {
    const { room, client } = setup()
    deleteObservation(room, 'b-1')
    Y.applyUpdate(client, Y.encodeStateAsUpdate(room))
    // A full state update repeats the delete set the room already knows.
    expect(checkUpdate('read', room, Y.encodeStateAsUpdate(client))).toMatchObject({ ok: true, noop: true })
  })

  it('refuses any change from a read connection, naming the keys', () => {
    const { room, client } = setup()
    const v = checkUpdate('read', room, changeOf(client, room, (d) => putAlias(d, alias('w', 'c'))))
    expect(v).toMatchObject({ ok: false, code: 'read_only', keys: { aliases: ['w'] } })
  })

  it('read_write: additions and alias re-pointing pass; edits and deletes of observations and alias deletes do not', () => {
    const cases: Array<[string, (d: Y.Doc) => void, boolean, string?]> = [
      ['new observation', (d) => putObservation(d, observation('c-1')), true],
      // accepting `c` -> `c inc` re-points `v`, which led to `c`
      ['merge and re-point alias', (d) => {
        putAlias(d, alias('c', 'c inc'))
        putAlias(d, alias('v', 'c inc'))
      }, true],
      // accepting `v inc` -> `v` after `v` was merged into `c` writes `v inc` -> `c`
      ['merge into a name already merged away', (d) => putAlias(d, alias('v inc', 'c')), true],
      ['re-point alias alone', (d) => putAlias(d, alias('v', 'c2')), false, 'unproposed_merge'],
      ['merge unrelated names', (d) => putAlias(d, alias('alice smith', 'mallory jones')), false, 'unproposed_merge'],
      ['re-reject a pair', (d) => putRejected(d, 'p-1', { pair: ['x', 'y'], at: '2026-03-15T10:00:00.000Z' }), true],
      // judged like any other write to an existing key, never by comparing serialized values
      ['same value again', (d) => putObservation(d, observation('a-1')), false],
      ['edit observation', (d) => putObservation(d, observation('a-1', { title: 'New title' })), false],
      ['delete observation', (d) => deleteObservation(d, 'b-1'), false],
      ['delete alias', (d) => d.getMap(ROOTS.aliases).delete('v'), false],
      ['delete rejection', (d) => d.getMap(ROOTS.rejected).delete('p-1'), false],
    ]
    for (const [name, edit, allowed, code = 'not_additive'] of cases) {
      const { room, client } = setup()
      const v = checkUpdate('read_write', room, changeOf(client, room, edit))
      expect({ name, ok: v.ok }).toEqual({ name, ok: allowed })
      if (!allowed) expect({ name, v }).toMatchObject({ name, v: { code } })
    }
  })

  it('read_write and full: refuse foreign top-level types and invalid entries', () => {
    const { room, client } = setup()
    const foreign = changeOf(client, room, (d) => d.getMap('admin').set('owner', 'me'))
    expect(checkUpdate('read_write', room, foreign)).toMatchObject({ ok: false, code: 'unknown_root', keys: { roots: ['admin'] } })
    const bad = changeOf(setup().client, room, (d) => d.getMap(ROOTS.observations).set('z-1', { slug: 'z-1' }))
    expect(checkUpdate('read_write', room, bad)).toMatchObject({ ok: false, code: 'invalid_value', keys: { observations: ['z-1'] } })
    expect(checkUpdate('full', room, foreign)).toMatchObject({ ok: false, code: 'unknown_root' })
    expect(checkUpdate('full', room, bad)).toMatchObject({ ok: false, code: 'invalid_value', keys: { observations: ['z-1'] } })
    // full may edit and delete what read_write may only add to
    const edits = changeOf(createCopy(room), room, (d) => {
      deleteObservation(d, 'a-1')
      putObservation(d, observation('b-1', { content: 'edited' }))
    })
    expect(checkUpdate('read_write', room, edits)).toMatchObject({ ok: false, code: 'not_additive' })
    expect(checkUpdate('full', room, edits)).toMatchObject({ ok: true, noop: false })
  })

  it('holds back an update whose history the room lacks, and decodes garbage as malformed', () => {
    const { room, client } = setup()
    putObservation(client, observation('offline-1'))
    const sv = Y.encodeStateVector(client)
    putObservation(client, observation('offline-2'))
    const tail = Y.encodeStateAsUpdate(client, sv)
    expect(checkUpdate('read_write', room, tail)).toEqual({ ok: false, incomplete: true })
    expect(checkUpdate('read_write', room, Y.mergeUpdates([Y.encodeStateAsUpdate(client, Y.encodeStateVector(room)), tail])).ok).toBe(true)
    expect(checkUpdate('read_write', room, new Uint8Array([200, 1, 2, 3, 255]))).toMatchObject({ ok: false, code: 'malformed' })
  })

  it('judges each update against the room as it is: a refused one leaves no trace, an accepted one counts once the room applies it', () => {
    const { room, client } = setup()
    const removal = changeOf(client, room, (d) => deleteObservation(d, 'a-1'))
    expect(checkUpdate('read_write', room, removal)).toMatchObject({ ok: false, code: 'not_additive' })
    // the same refused change again is refused again, not taken for something the room has
    expect(checkUpdate('read_write', room, removal)).toMatchObject({ ok: false, code: 'not_additive' })
    const addition = changeOf(createCopy(room), room, (d) => putObservation(d, observation('c-1')))
    expect(checkUpdate('read_write', room, addition)).toMatchObject({ ok: true, noop: false })
    // not applied to the room yet: still news
    expect(checkUpdate('read_write', room, addition)).toMatchObject({ ok: true, noop: false })
    Y.applyUpdate(room, addition)
    expect(checkUpdate('read_write', room, addition)).toMatchObject({ ok: true, noop: true })
    expect(checkUpdate('read', room, addition)).toMatchObject({ ok: true, noop: true })
    // a change the room took from elsewhere (a full connection) is seen by the next check
    const elsewhere = createCopy(room)
    deleteObservation(elsewhere, 'b-1')
    Y.applyUpdate(room, Y.encodeStateAsUpdate(elsewhere, Y.encodeStateVector(room)))
    const readd = changeOf(createCopy(room), room, (d) => putObservation(d, observation('b-1')))
    expect(checkUpdate('read_write', room, readd)).toMatchObject({ ok: true, noop: false })
  })

  it('passes on an update the room takes whole as it came, and one that re-sends history or deletes as the room integrates it', () => {
    const { room, client } = setup()
    const roomWith = (update: Uint8Array) => {
      const copy = createCopy(room)
      Y.applyUpdate(copy, update)
      return copy
    }
    // new structs only, from the clock the room reached: not encoded again
    const addition = changeOf(client, room, (d) => putObservation(d, observation('c-1')))
    const added = checkUpdate('read_write', room, addition)
    expect(added).toMatchObject({ ok: true, noop: false })
    expect(added.ok && added.update).toBe(addition)

    // the client's whole state (a sync step 2): only what the room lacks goes on
    putObservation(client, observation('d-1'))
    const whole = Y.encodeStateAsUpdate(client)
    const resent = checkUpdate('read_write', room, whole)
    if (!resent.ok || resent.noop) throw new Error('expected news')
    expect(resent.update).not.toBe(whole)
    expect(resent.update!.byteLength).toBeLessThan(whole.byteLength)
    expect(roomWith(resent.update!).getMap(ROOTS.observations).toJSON()).toEqual(roomWith(whole).getMap(ROOTS.observations).toJSON())
    expect(Y.decodeUpdate(resent.update!).structs.every((s) => s.id.clock >= Y.getState(room.store, s.id.client))).toBe(true)

    // a deletion, from a full connection: as the copy integrated it
    const fresh = setup()
    const removal = changeOf(fresh.client, fresh.room, (d) => deleteObservation(d, 'a-1'))
    const removed = checkUpdate('full', fresh.room, removal)
    if (!removed.ok || removed.noop) throw new Error('expected a change')
    expect(removed.update).not.toBe(removal)
    Y.applyUpdate(fresh.room, removed.update!)
    expect(fresh.room.getMap(ROOTS.observations).has('a-1')).toBe(false)
  })
})

function createCopy(room: Y.Doc): Y.Doc {
  const copy = createMemoryDoc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(room))
  return copy
}

describe('noteLoadedState', () => {
  it('judges against the state a room was loaded from, and against the room itself once it changed', () => {
    const { room: source, client } = setup()
    const state = Y.encodeStateAsUpdate(source)
    const loaded = new Y.Doc({ gc: true })
    Y.applyUpdate(loaded, state)
    noteLoadedState(loaded, state)
    const overwrite = changeOf(client, loaded, (d) => putObservation(d, { ...observation('a-1'), content: 'changed' }))
    expect(checkUpdate('read_write', loaded, overwrite)).toMatchObject({ ok: false, code: 'not_additive', keys: { observations: ['a-1'] } })

    // the room changes after loading: what it was loaded from no longer describes it
    const stale = new Y.Doc({ gc: true })
    Y.applyUpdate(stale, state)
    noteLoadedState(stale, state)
    const later = createMemoryDoc()
    Y.applyUpdate(later, state)
    putObservation(later, observation('c-1'))
    Y.applyUpdate(stale, Y.encodeStateAsUpdate(later, Y.encodeStateVector(stale)))
    const copy = createCopy(stale)
    const overwriteNew = changeOf(copy, stale, (d) => putObservation(d, { ...observation('c-1'), content: 'changed' }))
    expect(checkUpdate('read_write', stale, overwriteNew)).toMatchObject({ ok: false, code: 'not_additive', keys: { observations: ['c-1'] } })
  })
})
