// The gate on its own, with a stand-in socket, for orderings a real client rarely produces.
import { EventEmitter } from 'node:events'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import type { ConnectionRecord, Tier } from '../../src/core/types'
import { DEFAULT_BUDGET, newBudgetWindow } from '../../src/server/connection-budget'
import { GatedSocket } from '../../src/server/gated-socket'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { MESSAGE_REFUSAL, readRefusal } from '../../src/sync/refusal'
import { observation } from '../sync/fixture'

class FakeSocket extends EventEmitter {
  readonly OPEN = 1
  readyState = 1
  binaryType = 'nodebuffer'
  sent: Uint8Array[] = []
  send(m: Uint8Array) {
    this.sent.push(m)
  }
}

function syncFrame(step: number, update: Uint8Array): Buffer {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  encoding.writeVarUint(e, step)
  encoding.writeVarUint8Array(e, update)
  return Buffer.from(encoding.toUint8Array(e))
}

function gate(tier: Tier, room: Y.Doc) {
  const ws = new FakeSocket()
  const connection: ConnectionRecord = { id: 'conn_t', memoryId: 'm', agent: 'a', tier, tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null }
  const g = new GatedSocket(ws as unknown as WebSocket, { connection, room: 'm', log: () => {}, roomDoc: () => room, isRevoked: () => false, onRevokedUpdate: () => {},
    ownerOf: () => undefined, bindClients: async () => undefined, persist: null, budget: DEFAULT_BUDGET, window: newBudgetWindow(DEFAULT_BUDGET), onClose: () => {},
  })
  const forwarded: Uint8Array[] = []
  g.on('message', (m: ArrayBuffer) => forwarded.push(new Uint8Array(m)))
  // accepted updates reach the room with this socket as their origin, as the room code applies them
  const applied: Uint8Array[] = []
  room.on('update', (u: Uint8Array, origin: unknown) => {
    if (origin === g) applied.push(u)
  })
  g.start()
  const refusals = () => ws.sent.map((m) => decoding.createDecoder(m)).filter((d) => decoding.readVarUint(d) === MESSAGE_REFUSAL).map(readRefusal)
  return { ws, forwarded, applied, refusals, handled: () => g.idle() }
}

describe('GatedSocket', () => {
  it('holds an update that arrives before the sync step 2 it builds on, then lets both through', async () => {
    const room = createMemoryDoc()
    const client = createMemoryDoc()
    putObservation(client, observation('offline-1'))
    const sv = Y.encodeStateVector(client)
    putObservation(client, observation('typed-after-connect-1'))
    const { ws, forwarded, applied, refusals, handled } = gate('read_write', room)
    ws.emit('message', syncFrame(syncProtocol.messageYjsUpdate, Y.encodeStateAsUpdate(client, sv)))
    await handled()
    expect(applied).toHaveLength(0)
    ws.emit('message', syncFrame(syncProtocol.messageYjsSyncStep2, Y.encodeStateAsUpdate(client, Y.encodeStateVector(room))))
    // delivered a turn after it is judged: on a busy machine that can take longer than one wait
    for (let i = 0; i < 250 && applied.length === 0; i++) await handled()
    expect(applied).toHaveLength(1)
    expect(forwarded).toHaveLength(0)
    expect(refusals()).toEqual([])
    expect(room.getMap('observations').size).toBe(2)
  })

  it('passes state vectors, drops awareness and unknown message types, and refuses garbage', async () => {
    const room = createMemoryDoc()
    const { ws, forwarded, refusals, handled } = gate('read', room)
    const step1 = encoding.createEncoder()
    encoding.writeVarUint(step1, 0)
    syncProtocol.writeSyncStep1(step1, room)
    ws.emit('message', Buffer.from(encoding.toUint8Array(step1)))
    ws.emit('message', Buffer.from([1, 1, 0]))
    ws.emit('message', Buffer.from([42, 0]))
    await handled()
    expect(forwarded.map((f) => f[0])).toEqual([0])
    // a sync step 2 whose update is cut short
    ws.emit('message', Buffer.from([0, 1, 200]))
    await handled()
    expect(refusals().map((r) => r.code)).toEqual(['malformed'])
    // an update from a read connection is refused unread, garbage or not
    ws.emit('message', Buffer.from([0, 2, 200]))
    await handled()
    expect(refusals().map((r) => r.code)).toEqual(['malformed', 'read_only'])
  })
})
