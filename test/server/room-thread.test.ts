// The sync server's second thread: its answers are the ones the server would compute itself,
// and they keep coming (computed here) when the thread is gone.
import { afterEach, describe, expect, it } from 'vitest'
import * as decoding from 'lib0/decoding'
import * as Y from 'yjs'
import type { SyncLog } from '../../src/server/log'
import { decodeRecords, encodeRecord } from '../../src/server/room-log'
import { RoomThread } from '../../src/server/room-thread'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation } from '../sync/fixture'

const logged: string[] = []
const log: SyncLog = (level, event) => void logged.push(`${level} ${event}`)
let thread: RoomThread | undefined
afterEach(async () => {
  await thread?.terminate()
  logged.length = 0
})

/** The update a sync step 2 message carries. */
function stepTwo(message: Uint8Array): Uint8Array {
  const d = decoding.createDecoder(message)
  expect(decoding.readVarUint(d)).toBe(0)
  expect(decoding.readVarUint(d)).toBe(1)
  return decoding.readVarUint8Array(d)
}

/** A room loaded from stored state, mirrored in the thread, then changed 20 times. */
function mirroredRoom(t: RoomThread): Y.Doc {
  const before = createMemoryDoc()
  for (let i = 0; i < 30; i++) putObservation(before, observation(`stored-${i}`))
  const state = Y.encodeStateAsUpdate(before)
  const room = new Y.Doc({ gc: true })
  Y.applyUpdate(room, state)
  const writer = createMemoryDoc()
  Y.applyUpdate(writer, state)
  // handed over: the state is not read here afterwards
  t.open('room-1', room, state)
  room.on('update', (u: Uint8Array) => t.update('room-1', room, u))
  writer.on('update', (u: Uint8Array) => Y.applyUpdate(room, u))
  for (let i = 0; i < 20; i++) putObservation(writer, observation(`live-${i}`))
  return room
}

describe('RoomThread', () => {
  it('answers a new client and a client that lacks only the last changes with what the room holds beyond them', async () => {
    thread = new RoomThread(log)
    expect(thread.threaded).toBe(true)
    const room = mirroredRoom(thread)
    const fresh = createMemoryDoc()
    Y.applyUpdate(fresh, stepTwo((await thread.syncReply('room-1', room, Y.encodeStateVector(fresh)))!))
    expect([...readMemoryDoc(fresh).observations.keys()].sort()).toEqual([...readMemoryDoc(room).observations.keys()].sort())
    expect(readMemoryDoc(fresh).observations.size).toBe(50)

    putObservation(room, observation('latest'))
    const behind = Y.encodeStateVector(fresh)
    const tail = stepTwo((await thread.syncReply('room-1', room, behind))!)
    Y.applyUpdate(fresh, tail)
    expect(readMemoryDoc(fresh).observations.has('latest')).toBe(true)
    expect(Y.encodeStateVector(fresh)).toEqual(Y.encodeStateVector(room))
    // only what was missing travels
    expect(tail.byteLength).toBeLessThan(Y.encodeStateAsUpdate(room).byteLength / 10)
    expect(thread.threaded).toBe(true)
    expect(logged).toEqual([])
  })

  it('checks and merges a room log as this thread does', async () => {
    thread = new RoomThread(log)
    const doc = createMemoryDoc()
    const updates: Uint8Array[] = []
    doc.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < 10; i++) putObservation(doc, observation(`o-${i}`))
    const bytes = Buffer.concat([...updates.map(encodeRecord), Buffer.from([1, 2, 3])])
    const expected = decodeRecords(bytes)
    const decoded = await thread.decodeLog(bytes)
    expect(decoded.goodLength).toBe(expected.goodLength)
    expect(decoded.skipped).toEqual(expected.skipped)
    expect(decoded.records.map((r) => [...r])).toEqual(updates.map((u) => [...u]))
    const merged = createMemoryDoc()
    Y.applyUpdate(merged, await thread.merge(decoded.records))
    expect(readMemoryDoc(merged).observations.size).toBe(10)
    const record = await thread.mergeRecord(updates.map((u) => u.slice()))
    const [only, ...rest] = decodeRecords(Buffer.from(record)).records
    expect(rest).toEqual([])
    const fromRecord = createMemoryDoc()
    Y.applyUpdate(fromRecord, only!)
    expect(readMemoryDoc(fromRecord).observations.size).toBe(10)
    expect(thread.threaded).toBe(true)
  })

  it('answers in this thread once the second thread is gone, and for a document it does not mirror', async () => {
    thread = new RoomThread(log)
    const room = mirroredRoom(thread)
    const other = createMemoryDoc()
    putObservation(other, observation('elsewhere'))
    const fromOther = createMemoryDoc()
    Y.applyUpdate(fromOther, stepTwo((await thread.syncReply('room-1', other, new Uint8Array([0])))!))
    expect([...readMemoryDoc(fromOther).observations.keys()]).toEqual(['elsewhere'])

    await thread.terminate()
    expect(thread.threaded).toBe(false)
    putObservation(room, observation('after'))
    const fresh = createMemoryDoc()
    Y.applyUpdate(fresh, stepTwo((await thread.syncReply('room-1', room, new Uint8Array([0])))!))
    expect(readMemoryDoc(fresh).observations.size).toBe(51)
    expect((await thread.merge([Y.encodeStateAsUpdate(room)])).byteLength).toBeGreaterThan(0)
    room.destroy()
    expect(await thread.syncReply('room-1', room, new Uint8Array([0]))).toBeNull()
  })
})
