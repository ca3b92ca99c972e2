// A peer sends a sync step 2 made only of a delete set that repeats the range [0, clock) of one
// client 10,000 times (30 KB). Yjs, and a check that follows it, walk the room's structs once
// per range: 10,000 walks of the room for one message. The promise: a delete set is merged
// before any walk, so the room's structs are read at most once per message; a read
// connection's delete set is not read against the room at all; a no-op that made the server
// read much of the room is paid for, and a flood of them closes the connection.
import { EventEmitter } from 'node:events'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import type { ConnectionRecord, Tier } from '../../src/core/types'
import { BYTES_PER_STRUCT_READ, DEFAULT_BUDGET, newBudgetWindow } from '../../src/server/connection-budget'
import { GatedSocket } from '../../src/server/gated-socket'
import { checkUpdate } from '../../src/server/update-policy'
import { mergeDeleteRanges } from '../../src/server/delete-ranges'
import { screenUpdate } from '../../src/server/update-screen'
import { ROOTS } from '../../src/sync/layout'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { MESSAGE_REFUSAL, readRefusal } from '../../src/sync/refusal'
import { observation } from '../sync/fixture'

const WRITER = 1001
const OWNER = 1002
const NOTES = 3_000
const REPEATS = 10_000

/**
 * A room of some thousands of notes: a writer's NOTES notes, each deleted since by the owner
 * (so [0, NOTES) of the writer is all tombstones, one struct per note), and as many live notes
 * of the owner's.
 */
function room(): Y.Doc {
  const doc = createMemoryDoc()
  doc.clientID = WRITER
  for (let i = 0; i < NOTES; i++) putObservation(doc, observation(`gone-${i}`))
  doc.clientID = OWNER
  doc.transact(() => {
    for (let i = 0; i < NOTES; i++) doc.getMap(ROOTS.observations).delete(`gone-${i}`)
  })
  for (let i = 0; i < NOTES; i++) putObservation(doc, observation(`kept-${i}`))
  return doc
}

/** A V1 update with no structs and, for each client, the given delete ranges as they are. */
function deleteSetOnly(ranges: Array<[client: number, clock: number, len: number]>): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  const byClient = new Map<number, Array<[number, number]>>()
  for (const [client, clock, len] of ranges) byClient.set(client, [...(byClient.get(client) ?? []), [clock, len]])
  encoding.writeVarUint(e, byClient.size)
  for (const [client, list] of byClient) {
    encoding.writeVarUint(e, client)
    encoding.writeVarUint(e, list.length)
    for (const [clock, len] of list) {
      encoding.writeVarUint(e, clock)
      encoding.writeVarUint(e, len)
    }
  }
  return encoding.toUint8Array(e)
}

const repeated = (client: number, clock: number, len: number, times = REPEATS): Array<[number, number, number]> => Array.from({ length: times }, () => [client, clock, len])

/** Counts how many of `client`'s structs are read from the room, by index, from now on. */
function countReads(doc: Y.Doc, client: number): () => number {
  let reads = 0
  const structs = doc.store.clients.get(client)!
  doc.store.clients.set(client, new Proxy(structs, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++
      return Reflect.get(target, key, receiver)
    },
  }))
  return () => reads
}

const sender = { connectionId: 'conn_t', ownerOf: () => 'conn_t', claimsLeft: 16 }

describe('a delete set that repeats one range', () => {
  it('is 30 KB and stays under the size of one message', () => {
    expect(deleteSetOnly(repeated(WRITER, 0, NOTES)).byteLength).toBeLessThan(32 * 1024)
  })

  it('is merged before the room is read: a read connection reads none of it, a read_write one each struct once', () => {
    const doc = room()
    const flood = deleteSetOnly(repeated(WRITER, 0, NOTES))
    const reads = countReads(doc, WRITER)
    expect(screenUpdate(doc, flood, { tier: 'read', ...sender })).toMatchObject({ ok: true, noop: true, work: 0 })
    expect(reads()).toBe(0)
    const verdict = screenUpdate(doc, flood, { tier: 'read_write', ...sender })
    expect(verdict).toMatchObject({ ok: true, noop: true, redundantDeletes: true })
    // one walk of the writer's structs, plus the binary search that finds where it starts
    expect(reads()).toBeLessThan(NOTES + 64)
    expect((verdict as { work: number }).work).toBeLessThanOrEqual(NOTES + 1)
  })

  it('over live notes, is refused once it has named the keys a refusal names, without reading the rest of the room', () => {
    const doc = room()
    const reads = countReads(doc, OWNER)
    const verdict = screenUpdate(doc, deleteSetOnly(repeated(OWNER, 0, NOTES)), { tier: 'read_write', ...sender })
    expect(verdict).toMatchObject({ ok: false, code: 'not_additive' })
    expect((verdict as { keys: Record<string, string[]> }).keys.observations).toHaveLength(20)
    expect(reads()).toBeLessThan(100)
  })

  it('is a no-op for every tier, never applied to the room copy; a real deletion inside it is applied merged', () => {
    const doc = room()
    const flood = deleteSetOnly(repeated(WRITER, 0, NOTES))
    for (const tier of ['read', 'read_write', 'full'] as Tier[]) {
      const v = checkUpdate(tier, doc, flood, sender)
      expect(v).toMatchObject({ ok: true, noop: true })
      expect((v as { work?: number }).work ?? 0).toBeLessThanOrEqual(NOTES + 1)
    }
    // the owner's full connection deletes one live note, with the same 10,000 repeats around it
    const kept = doc.getMap(ROOTS.observations)._map.get('kept-7')!
    const real = deleteSetOnly([...repeated(WRITER, 0, NOTES, REPEATS / 2), [OWNER, kept.id.clock, 1], ...repeated(WRITER, 0, NOTES, REPEATS / 2)])
    const v = checkUpdate('full', doc, real, sender)
    expect(v).toMatchObject({ ok: true, noop: false })
    const applied = Y.decodeUpdate((v as { update: Uint8Array }).update)
    for (const ranges of applied.ds.clients.values()) expect(ranges.length).toBe(1)
    Y.applyUpdate(doc, (v as { update: Uint8Array }).update)
    expect(doc.getMap(ROOTS.observations).has('kept-7')).toBe(false)
    expect(doc.getMap(ROOTS.observations).size).toBe(NOTES - 1)
  })

  it('merges like Yjs: sorted, overlapping and touching ranges joined, and says when it had to', () => {
    const ds = new Map([[1, [{ clock: 5, len: 5 }, { clock: 0, len: 3 }, { clock: 3, len: 1 }, { clock: 20, len: 2 }, { clock: 6, len: 1 }]]])
    expect(mergeDeleteRanges(ds)).toEqual({ clients: new Map([[1, [{ clock: 0, len: 4 }, { clock: 5, len: 5 }, { clock: 20, len: 2 }]]]), redundant: true })
    const yjs = new Map([[1, [{ clock: 0, len: 4 }, { clock: 5, len: 5 }]], [2, [{ clock: 3, len: 1 }]]])
    expect(mergeDeleteRanges(yjs)).toEqual({ clients: yjs, redundant: false })
  })
})

class FakeSocket extends EventEmitter {
  readonly OPEN = 1
  readyState = 1
  sent: Uint8Array[] = []
  send(m: Uint8Array) {
    this.sent.push(m)
  }
}

function syncStep2(update: Uint8Array): Buffer {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  encoding.writeVarUint(e, syncProtocol.messageYjsSyncStep2)
  encoding.writeVarUint8Array(e, update)
  return Buffer.from(encoding.toUint8Array(e))
}

function gate(tier: Tier, roomDoc: Y.Doc) {
  const ws = new FakeSocket()
  const connection: ConnectionRecord = { id: 'conn_t', memoryId: 'm', agent: 'a', tier, tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null }
  const closes: number[] = []
  const window = newBudgetWindow(DEFAULT_BUDGET)
  const g = new GatedSocket(ws as unknown as WebSocket, {
    connection, room: 'm', log: () => {}, roomDoc: () => roomDoc, isRevoked: () => false, onRevokedUpdate: () => {},
    ownerOf: () => undefined, bindClients: async () => undefined, persist: null, budget: DEFAULT_BUDGET, window, onClose: (code) => closes.push(code),
  })
  const forwarded: Uint8Array[] = []
  g.on('message', (m: ArrayBuffer) => forwarded.push(new Uint8Array(m)))
  g.start()
  const refusals = () => ws.sent.map((m) => decoding.createDecoder(m)).filter((d) => decoding.readVarUint(d) === MESSAGE_REFUSAL).map(readRefusal)
  return { ws, forwarded, refusals, closes, window, handled: () => g.idle() }
}

describe('a flood of delete-set-only sync messages', () => {
  it('read_write: each no-op that read the room counts against the budget, and the socket is closed past it', async () => {
    const doc = room()
    const flood = syncStep2(deleteSetOnly(repeated(WRITER, 0, NOTES)))
    const g = gate('read_write', doc)
    const before = g.window.bytes
    g.ws.emit('message', flood)
    await g.handled()
    // the message's bytes and the structs its check read
    expect(before - g.window.bytes).toBeGreaterThanOrEqual(flood.byteLength + NOTES * BYTES_PER_STRUCT_READ - 1)
    for (let i = 1; i < DEFAULT_BUDGET.refusals + 5; i++) {
      g.ws.emit('message', flood)
      await g.handled()
    }
    expect(g.refusals().map((r) => r.code)).toContain('over_budget')
    expect(g.closes).toHaveLength(1)
    expect(g.forwarded).toHaveLength(0)
  })

  it('read: the delete set is not applied nor answered with a refusal; new structs still are refused', async () => {
    const doc = room()
    const g = gate('read', doc)
    const flood = syncStep2(deleteSetOnly(repeated(WRITER, 0, NOTES)))
    const before = g.window.bytes
    for (let i = 0; i < 5; i++) g.ws.emit('message', flood)
    await g.handled()
    // charged its bytes alone: the check read none of the room's structs (the bucket refills a little meanwhile)
    expect(before - g.window.bytes).toBeLessThanOrEqual(5 * flood.byteLength)
    expect(before - g.window.bytes).toBeGreaterThan(5 * flood.byteLength - DEFAULT_BUDGET.bytesPerSecond)
    expect(g.forwarded).toHaveLength(0)
    expect(g.refusals()).toEqual([])
    const other = createMemoryDoc()
    putObservation(other, observation('sneaked-1'))
    g.ws.emit('message', syncStep2(Y.encodeStateAsUpdate(other)))
    await g.handled()
    expect(g.refusals().map((r) => r.code)).toEqual(['read_only'])
  })
})
