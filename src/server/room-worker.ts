// The sync server's second thread: work whose cost grows with a whole room, done here so the
// server's event loop stays free for every other socket. It keeps a copy of each loaded room
// (fed the room's updates in order) to answer a new client's state vector with what it lacks
// (in pieces when it is large),
// and it checks a room log's records for the file store's load and merges them for its compaction.
import { parentPort } from 'node:worker_threads'
import * as Y from 'yjs'
import { firstSyncMessages } from '../sync/first-sync'
import { compactLog, decodeRecords, encodeRecord, movable } from './room-log'

export type RoomWorkerRequest =
  | { op: 'open'; room: string; state: Uint8Array | null; gc: boolean }
  /** Room changes in order: the i-th is `bytes` up to `ends[i]` (from the end of the one before), of `rooms[i]`. */
  | { op: 'updates'; rooms: string[]; ends: number[]; bytes: Uint8Array }
  | { op: 'close'; room: string }
  | { op: 'syncReply'; id: number; room: string; stateVector: Uint8Array }
  | { op: 'merge'; id: number; updates: Uint8Array[]; asRecord: boolean }
  | { op: 'decodeLog'; id: number; bytes: Uint8Array }
  | { op: 'compactLog'; id: number; bytes: Uint8Array }

export type RoomWorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }

const rooms = new Map<string, Y.Doc>()

function answer(request: Extract<RoomWorkerRequest, { id: number }>): { value: unknown; transfer: ArrayBuffer[] } {
  switch (request.op) {
    case 'syncReply': {
      const doc = rooms.get(request.room)
      if (!doc) throw new Error(`room "${request.room}" is not open`)
      const messages = firstSyncMessages(Y.encodeStateAsUpdate(doc, request.stateVector))
      return { value: messages, transfer: movable(messages) }
    }
    case 'merge': {
      const merged = request.updates.length === 1 ? request.updates[0]! : Y.mergeUpdates(request.updates)
      const value = request.asRecord ? encodeRecord(merged) : merged
      return { value, transfer: movable([value]) }
    }
    case 'compactLog': {
      const compacted = compactLog(Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength))
      return { value: compacted, transfer: compacted ? movable([compacted.record]) : [] }
    }
    case 'decodeLog': {
      const log = decodeRecords(Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength))
      return { value: log, transfer: movable(log.records) }
    }
  }
}

parentPort!.on('message', (request: RoomWorkerRequest) => {
  if (request.op === 'open') {
    rooms.get(request.room)?.destroy()
    const doc = new Y.Doc({ gc: request.gc })
    if (request.state) Y.applyUpdate(doc, request.state)
    rooms.set(request.room, doc)
    return
  }
  if (request.op === 'updates') {
    const { rooms: names, ends, bytes } = request
    const byRoom = new Map<string, Uint8Array[]>()
    for (let i = 0, from = 0; i < names.length; from = ends[i++]!) {
      let list = byRoom.get(names[i]!)
      if (!list) byRoom.set(names[i]!, (list = []))
      list.push(bytes.subarray(from, ends[i]))
    }
    // a room's changes in order, in one transaction: its clean-up runs once, not once per change
    for (const [room, updates] of byRoom) {
      const doc = rooms.get(room)
      if (doc) Y.transact(doc, () => {
        for (const u of updates) Y.applyUpdate(doc, u)
      })
    }
    return
  }
  if (request.op === 'close') {
    rooms.get(request.room)?.destroy()
    rooms.delete(request.room)
    return
  }
  try {
    const { value, transfer } = answer(request)
    parentPort!.postMessage({ id: request.id, ok: true, value } satisfies RoomWorkerReply, transfer)
  } catch (err) {
    parentPort!.postMessage({ id: request.id, ok: false, error: (err as Error).message } satisfies RoomWorkerReply)
  }
})
