// The sync client sends the server its large updates in pieces, through the WebSocket class the
// provider promises to use (`WebSocketPolyfill`), not by swapping the provider's own handler:
// its answer to the server's state vector and its own large transactions, each piece within the
// limit, in an order the server can apply one by one.
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import * as syncProtocol from 'y-protocols/sync'
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { nextTurn } from '../../src/sync/turns'

const LIMIT = 2_000

/** A socket that records what the provider sends and opens when told. */
class FakeSocket {
  static last: FakeSocket | undefined
  readonly OPEN = 1
  readyState = 0
  binaryType = 'blob'
  sent: Uint8Array[] = []
  onopen: (() => void) | null = null
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null
  onclose: ((event: unknown) => void) | null = null
  onerror: ((event: unknown) => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.last = this
  }
  send(data: Uint8Array): void {
    this.sent.push(new Uint8Array(data))
  }
  close(): void {
    this.readyState = 3
  }
  open(): void {
    this.readyState = 1
    this.onopen?.()
  }
  receive(message: Uint8Array): void {
    this.onmessage?.({ data: message.slice().buffer })
  }
}

/** The sync messages among `sent`, as (step, update). */
function syncUpdates(sent: Uint8Array[]): Array<{ step: number; update: Uint8Array }> {
  return sent.flatMap((m) => {
    const d = decoding.createDecoder(m)
    if (decoding.readVarUint(d) !== 0) return []
    const step = decoding.readVarUint(d)
    return step === syncProtocol.messageYjsSyncStep1 ? [] : [{ step, update: decoding.readVarUint8Array(d) }]
  })
}

function fill(doc: Y.Doc, notes: number): void {
  doc.transact(() => {
    for (let i = 0; i < notes; i++) doc.getMap('observations').set(`note-${i}`, { title: `note ${i}`, content: 'x'.repeat(200) })
  })
}

let client: SyncClient | undefined
afterEach(() => client?.destroy())

describe('the sync client sends large updates in pieces', () => {
  it('cuts a large local transaction into updates within the limit that rebuild it in order', () => {
    const doc = new Y.Doc()
    client = connectMemoryDoc({ serverUrl: 'ws://127.0.0.1:1', memoryId: 'm', token: 't', doc, crossTab: false, WebSocketPolyfill: FakeSocket, maxUpdateBytes: LIMIT })
    const socket = FakeSocket.last!
    socket.open()
    socket.sent = []
    fill(doc, 60)
    const sent = syncUpdates(socket.sent)
    expect(sent.length).toBeGreaterThan(1)
    const server = new Y.Doc()
    for (const { step, update } of sent) {
      expect(step).toBe(syncProtocol.messageYjsUpdate)
      expect(update.byteLength).toBeLessThanOrEqual(LIMIT)
      Y.applyUpdate(server, update)
      // each piece integrates on arrival: nothing waits for a later one
      expect(server.store.pendingStructs).toBeNull()
    }
    expect(server.getMap('observations').toJSON()).toEqual(doc.getMap('observations').toJSON())
  })

  it('answers the server state vector with its missing part in pieces', async () => {
    const doc = new Y.Doc()
    fill(doc, 60)
    client = connectMemoryDoc({ serverUrl: 'ws://127.0.0.1:1', memoryId: 'm', token: 't', doc, crossTab: false, WebSocketPolyfill: FakeSocket, maxUpdateBytes: LIMIT })
    const socket = FakeSocket.last!
    socket.open()
    socket.sent = []
    const server = new Y.Doc()
    const step1 = encoding.createEncoder()
    encoding.writeVarUint(step1, 0)
    syncProtocol.writeSyncStep1(step1, server)
    socket.receive(encoding.toUint8Array(step1))
    // each message is handled in a task of its own (see the next describe)
    await nextTurn()
    const sent = syncUpdates(socket.sent)
    expect(sent.length).toBeGreaterThan(1)
    for (const { step, update } of sent) {
      expect(step).toBe(syncProtocol.messageYjsSyncStep2)
      expect(update.byteLength).toBeLessThanOrEqual(LIMIT)
      Y.applyUpdate(server, update)
    }
    expect(server.getMap('observations').toJSON()).toEqual(doc.getMap('observations').toJSON())
  })

  it('sends a small update as it is, and leaves other messages alone', () => {
    const doc = new Y.Doc()
    client = connectMemoryDoc({ serverUrl: 'ws://127.0.0.1:1', memoryId: 'm', token: 't', doc, crossTab: false, WebSocketPolyfill: FakeSocket, maxUpdateBytes: LIMIT })
    const socket = FakeSocket.last!
    socket.open()
    // the provider's own step 1 on open went through untouched
    expect(socket.sent.length).toBeGreaterThan(0)
    socket.sent = []
    doc.getMap('observations').set('one', { title: 'one' })
    expect(syncUpdates(socket.sent)).toHaveLength(1)
  })
})

describe('the sync client takes what the server sends a message per task', () => {
  /** A sync update message (what a piece of a first sync is) carrying `update`. */
  const updateMessage = (update: Uint8Array) => {
    const e = encoding.createEncoder()
    encoding.writeVarUint(e, 0)
    syncProtocol.writeUpdate(e, update)
    return encoding.toUint8Array(e)
  }

  /** A connected client whose socket receives `count` server notes as update messages, all at once. */
  const receivedAtOnce = (count: number): { doc: Y.Doc; server: Y.Doc; connected: SyncClient } => {
    const doc = new Y.Doc()
    const connected = (client = connectMemoryDoc({ serverUrl: 'ws://127.0.0.1:1', memoryId: 'm', token: 't', doc, crossTab: false, WebSocketPolyfill: FakeSocket }))
    const socket = FakeSocket.last!
    socket.open()
    const server = new Y.Doc()
    const updates: Uint8Array[] = []
    server.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < count; i++) server.getMap('observations').set(`note-${i}`, { title: `note ${i}` })
    for (const u of updates) socket.receive(updateMessage(u))
    return { doc, server, connected }
  }

  it('applies messages that came in one go one at a time, in order, so the device answers in between', async () => {
    // Node's ws hands over every message it has buffered in one go: here, three at once
    const { doc, server } = receivedAtOnce(3)
    const held = () => doc.getMap('observations').size
    expect(held()).toBe(0)
    const seen: number[] = []
    for (let turn = 0; turn < 3; turn++) {
      await nextTurn()
      seen.push(held())
    }
    expect(seen).toEqual([1, 2, 3])
    expect(doc.getMap('observations').toJSON()).toEqual(server.getMap('observations').toJSON())
  })

  it('drops what still waits once the provider lets the socket go', async () => {
    const { doc, connected } = receivedAtOnce(2)
    connected.disconnect()
    await nextTurn()
    await nextTurn()
    expect(doc.getMap('observations').size).toBe(0)
  })
})
