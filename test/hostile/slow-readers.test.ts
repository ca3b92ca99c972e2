// Peers that ask for the whole room and stop reading: 40 read sockets took a server from 276
// to 531 MiB on a 10.9 MB room, and more with every change the owner made, as everything the
// room relayed was queued for them. The promise: a connection holds a bounded number of
// sockets per memory, and a socket with more than its bound queued is dropped at once.
import { EventEmitter } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket as Ws, type WebSocket } from 'ws'
import type { ConnectionRecord } from '../../src/core/types'
import { DEFAULT_BUDGET, newBudgetWindow } from '../../src/server/connection-budget'
import { GatedSocket } from '../../src/server/gated-socket'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { startHarness, type Harness } from '../server/harness'
import { waitFor } from '../sync/fixture'

class StalledSocket extends EventEmitter {
  readonly OPEN = 1
  readyState = 1
  bufferedAmount = 0
  sent: Uint8Array[] = []
  terminated = false
  send(m: Uint8Array) {
    this.sent.push(m)
    this.bufferedAmount += m.byteLength
  }
  terminate() {
    this.terminated = true
    this.readyState = 3
  }
}

function gated(maxQueuedBytes: number) {
  const ws = new StalledSocket()
  const connection: ConnectionRecord = { id: 'conn_t', memoryId: 'm', agent: 'a', tier: 'read', tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null }
  const budget = { ...DEFAULT_BUDGET, maxQueuedBytes }
  const logs: string[] = []
  const g = new GatedSocket(ws as unknown as WebSocket, {
    connection, room: 'm', log: (_l, event) => logs.push(event), roomDoc: () => createMemoryDoc(), isRevoked: () => false, onRevokedUpdate: () => {},
    ownerOf: () => undefined, bindClients: async () => undefined, persist: null, budget, window: newBudgetWindow(budget), onClose: () => {},
  })
  return { ws, g, logs }
}

/** A sync step 2 (the room's answer to a new device) of about `bytes`. */
const step2 = (bytes: number) => new Uint8Array([0, 1, ...new Uint8Array(bytes - 2)])
const update = (bytes: number) => new Uint8Array([0, 2, ...new Uint8Array(bytes - 2)])

describe('a peer that stops reading', () => {
  it('gets the whole room once, then is dropped when the changes queued beyond it pass the bound', () => {
    const { ws, g, logs } = gated(1_000)
    g.send(step2(50_000))
    for (let i = 0; i < 4; i++) g.send(update(200))
    expect(ws.terminated).toBe(false)
    for (let i = 0; i < 4; i++) g.send(update(200))
    expect(ws.terminated).toBe(true)
    expect(logs).toContain('slow_reader')
    // nothing more is queued for it
    const sent = ws.sent.length
    g.send(update(200))
    expect(ws.sent.length).toBe(sent)
  })

  it('that reads keeps its socket, however much passes through it', () => {
    const { ws, g } = gated(1_000)
    for (let i = 0; i < 100; i++) {
      g.send(update(600))
      ws.bufferedAmount = 0
    }
    expect(ws.terminated).toBe(false)
    expect(ws.sent).toHaveLength(100)
  })
})

let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

describe('sockets of one connection', () => {
  it('are bounded per memory: the one past the bound is closed, the others keep syncing', async () => {
    h = await startHarness({ budget: { socketsPerConnection: 3 } })
    const { token } = h.token('mem-1', 'read', 'many-tabs')
    const url = `${h.server.url}/mem-1?token=${encodeURIComponent(token)}`
    const opened = await Promise.all(Array.from({ length: 3 }, () => new Promise<Ws>((resolve, reject) => {
      const ws = new Ws(url)
      ws.once('open', () => resolve(ws))
      ws.once('error', reject)
    })))
    const extra = new Ws(url)
    const code = await new Promise<number>((resolve) => extra.once('close', (c) => resolve(c)))
    expect(code).toBe(CLOSE.tooManySockets)
    await waitFor('the refusal logged', () => h!.logs.some((l) => l.event === 'too_many_sockets'))
    for (const ws of opened) expect(ws.readyState).toBe(Ws.OPEN)
    for (const ws of opened) ws.close()
  })
})
