// The sync server's second thread: its answers are the ones the server would compute itself,
// and they keep coming (computed here) when the thread is gone.
import { afterEach, describe, expect, it } from 'vitest'
import * as decoding from 'lib0/decoding'
import * as Y from 'yjs'
import type { SyncLog } from '../../src/server/log'
import { compactLog, decodeRecords, encodeRecord } from '../../src/server/room-log'
import { RoomThread } from '../../src/server/room-thread'
import { FIRST_SYNC_PIECE_BYTES, MESSAGE_SYNC_PROGRESS, readProgress } from '../../src/sync/first-sync'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { deleteObservation, putObservation } from '../helpers/doc-writes'
import { observation } from '../sync/fixture'

const logged: string[] = []
const log: SyncLog = (level, event) => void logged.push(`${level} ${event}`)
let thread: RoomThread | undefined
afterEach(async () => {
  await thread?.terminate()
  logged.length = 0
})

/** The update an answer carries, its pieces merged: every message is a sync update or progress, the last a step 2. */
function stepTwo(messages: Uint8Array[]): Uint8Array {
  const updates: Uint8Array[] = []
  messages.forEach((message, i) => {
    const d = decoding.createDecoder(message)
    const type = decoding.readVarUint(d)
    if (type === MESSAGE_SYNC_PROGRESS) return
    expect(type).toBe(0)
    expect(decoding.readVarUint(d)).toBe(i === messages.length - 1 ? 1 : 2)
    updates.push(decoding.readVarUint8Array(d))
  })
  return Y.mergeUpdates(updates)
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

  it('answers a large room in pieces, shared by every socket that asks the same until the room changes', async () => {
    thread = new RoomThread(log)
    const room = createMemoryDoc()
    thread.open('room-1', room, null)
    room.on('update', (u: Uint8Array) => thread!.update('room-1', room, u))
    // about 0.6 MB: three pieces or more
    for (let i = 0; i < 300; i++) putObservation(room, { ...observation(`big-${i}`), content: `note ${i} `.repeat(200).trim() })
    const empty = new Uint8Array([0])
    const reply = (await thread.syncReply('room-1', room, empty))!
    const progress = reply.filter((m) => m[0] === MESSAGE_SYNC_PROGRESS).map((m) => readProgress(decoding.createDecoder(m.subarray(1))))
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(progress.at(-1)).toEqual({ received: progress.length, of: progress.length + 1 })
    expect(Math.max(...reply.map((m) => m.byteLength))).toBeLessThanOrEqual(FIRST_SYNC_PIECE_BYTES + 64)
    // applied one by one, in order, each piece integrates: nothing waits for a later one
    const fresh = createMemoryDoc()
    for (const m of reply) {
      if (m[0] === MESSAGE_SYNC_PROGRESS) continue
      const d = decoding.createDecoder(m)
      decoding.readVarUint(d)
      decoding.readVarUint(d)
      Y.applyUpdate(fresh, decoding.readVarUint8Array(d))
      expect((fresh.store as unknown as { pendingStructs: unknown }).pendingStructs).toBeNull()
    }
    expect(readMemoryDoc(fresh).observations.size).toBe(300)
    expect(Y.encodeStateVector(fresh)).toEqual(Y.encodeStateVector(room))
    // a second new device gets the very same pieces; a change makes a new answer
    expect(await thread.syncReply('room-1', room, empty)).toBe(reply)
    putObservation(room, observation('later'))
    const after = (await thread.syncReply('room-1', room, empty))!
    expect(after).not.toBe(reply)
    const again = createMemoryDoc()
    Y.applyUpdate(again, stepTwo(after))
    expect(readMemoryDoc(again).observations.size).toBe(301)
  })

  it('answers with every change made before the question, though changes leave for the thread in batches', async () => {
    thread = new RoomThread(log)
    const rooms = ['room-a', 'room-b'].map((name) => {
      const room = createMemoryDoc()
      thread!.open(name, room, null)
      room.on('update', (u: Uint8Array) => thread!.update(name, room, u))
      return { name, room }
    })
    // changes to both rooms, interleaved, some left for the thread by the wait, some still waiting
    for (let i = 0; i < 20; i++) for (const { name, room } of rooms) putObservation(room, observation(`${name}-${i}`))
    await new Promise((resolve) => setTimeout(resolve, 100))
    for (const { name, room } of rooms) {
      // a change and a delete in the same batch as the question's
      putObservation(room, observation(`${name}-last`))
      deleteObservation(room, `${name}-0`)
    }
    for (const { name, room } of rooms) {
      const fresh = createMemoryDoc()
      Y.applyUpdate(fresh, stepTwo((await thread.syncReply(name, room, new Uint8Array([0])))!))
      expect([...readMemoryDoc(fresh).observations.keys()].sort()).toEqual([...readMemoryDoc(room).observations.keys()].sort())
      expect(readMemoryDoc(fresh).observations.has(`${name}-0`)).toBe(false)
      expect(Y.encodeStateVector(fresh)).toEqual(Y.encodeStateVector(room))
    }
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

  it('compacts a sound log into one record, and leaves a damaged or a one-record log alone, as the full check would', async () => {
    thread = new RoomThread(log)
    const doc = createMemoryDoc()
    const updates: Uint8Array[] = []
    doc.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < 10; i++) putObservation(doc, observation(`o-${i}`))
    deleteObservation(doc, 'o-3')
    const sound = () => Buffer.concat(updates.map(encodeRecord))

    const compacted = await thread.compactLog(sound())
    expect(compacted?.records).toBe(11)
    const [only, ...rest] = decodeRecords(Buffer.from(compacted!.record)).records
    expect(rest).toEqual([])
    const fromRecord = createMemoryDoc()
    Y.applyUpdate(fromRecord, only!)
    expect([...readMemoryDoc(fromRecord).observations.keys()].sort()).toEqual([...readMemoryDoc(doc).observations.keys()].sort())
    expect(Y.encodeStateVector(fromRecord)).toEqual(Y.encodeStateVector(doc))

    // a flipped byte, a torn tail, a record whose checksum passes but whose body is no Yjs update
    const flipped = sound()
    flipped[flipped.byteLength - 5]! ^= 0xff
    const torn = Buffer.concat([sound(), Buffer.from([0, 0, 0])])
    const notYjs = Buffer.concat([sound(), encodeRecord(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]))])
    for (const damaged of [flipped, torn, notYjs]) {
      const full = decodeRecords(damaged)
      expect(full.skipped.length > 0 || full.goodLength < damaged.byteLength).toBe(true)
      expect(compactLog(damaged)).toBeNull()
      expect(await thread.compactLog(damaged)).toBeNull()
    }
    expect(await thread.compactLog(encodeRecord(updates[0]!))).toBeNull()
    expect(await thread.compactLog(Buffer.alloc(0))).toBeNull()
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
