// A store that says when an update is durable (RoomStore.persist): no other client, and no
// sync reply, sees a client's update before the store has it; once it does, everyone does.
// A store whose write fails makes the server close the writer's socket, so it sends the update again.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import type { ConnectionRecord } from '../../src/core/types'
import { silentLog } from '../../src/server/log'
import type { RoomStore } from '../../src/server/room-store'
import { startSyncServer, type Authorize, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation, waitFor } from '../sync/fixture'

/** Holds every persist until the test releases (or fails) it. */
class GatedStore implements RoomStore {
  readonly stored: Uint8Array[] = []
  readonly waiting: Array<{ update: Uint8Array; resolve: () => void; reject: (e: Error) => void }> = []
  async load() {
    return this.stored.length ? Y.mergeUpdates(this.stored) : null
  }
  append(_room: string, update: Uint8Array) {
    this.stored.push(update)
  }
  persist(_room: string, update: Uint8Array) {
    return new Promise<void>((resolve, reject) => this.waiting.push({ update, resolve: () => {
      this.stored.push(update)
      resolve()
    }, reject }))
  }
  async flush() {}
  async compact() {}
  async close() {}
}

const writer: ConnectionRecord = { id: 'conn_w', memoryId: 'mem-p', agent: 'w', tier: 'read_write', tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null }
const authorize: Authorize = async (token) => (token === 'tok' ? { ok: true, connection: writer } : { ok: false, code: CLOSE.unauthorized, reason: 'unknown token' })

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function server(store: RoomStore): Promise<SyncServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-persist-'))
  const s = await startSyncServer({ dataDir, port: 0, store, authorize, log: silentLog })
  cleanups.push(async () => {
    await s.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return s
}

function client(s: SyncServer): SyncClient {
  const c = connectMemoryDoc({ serverUrl: s.url, memoryId: 'mem-p', token: 'tok', doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  cleanups.push(() => c.destroy())
  return c
}

const has = (c: SyncClient, slug: string) => readMemoryDoc(c.provider.doc).observations.has(slug)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('relaying waits for the store', () => {
  it('no peer or newcomer sees an update until the store has it', async () => {
    const store = new GatedStore()
    const s = await server(store)
    const [a, b] = [client(s), client(s)]
    await Promise.all([a.whenSynced(), b.whenSynced()])
    putObservation(a.provider.doc, observation('pending-1'))
    await waitFor('the update to reach the store', () => store.waiting.length === 1)
    const late = client(s)
    await sleep(300)
    expect(has(b, 'pending-1')).toBe(false)
    expect(has(late, 'pending-1')).toBe(false)
    // the room already holds it: a second update building on it is judged and accepted
    putObservation(a.provider.doc, observation('pending-2'))
    await waitFor('the second update to reach the store', () => store.waiting.length === 2)
    // the first is stored: it goes out; the second still waits
    store.waiting[0]!.resolve()
    await waitFor('the first to arrive', () => [b, late].every((c) => has(c, 'pending-1')))
    await sleep(200)
    expect(has(b, 'pending-2') || has(late, 'pending-2')).toBe(false)
    store.waiting[1]!.resolve()
    await waitFor('both to arrive everywhere', () => [b, late].every((c) => has(c, 'pending-1') && has(c, 'pending-2')))
    expect(a.status.refusals).toEqual([])
  }, 30_000)

  it('a failed write closes the writer\'s socket; the writer reconnects and sends it again', async () => {
    const store = new GatedStore()
    const s = await server(store)
    const [a, b] = [client(s), client(s)]
    await Promise.all([a.whenSynced(), b.whenSynced()])
    putObservation(a.provider.doc, observation('retried-1'))
    await waitFor('the write', () => store.waiting.length === 1)
    store.waiting[0]!.reject(new Error('disk on fire'))
    // after reconnecting, the update comes again through the sync handshake
    await waitFor('the resend', () => store.waiting.length >= 2, 10_000)
    for (const w of store.waiting.slice(1)) w.resolve()
    await waitFor('the peer to get it', () => has(b, 'retried-1'), 10_000)
    const doc = createMemoryDoc()
    Y.applyUpdate(doc, (await store.load())!)
    expect(readMemoryDoc(doc).observations.has('retried-1')).toBe(true)
  }, 30_000)
})
