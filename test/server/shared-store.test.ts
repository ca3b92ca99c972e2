// The scaling seam: two servers sharing one RoomStore (here in memory, standing in for Redis
// streams plus a database) serve one memory, and their clients converge.
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

/** One log per room plus a fan-out to every subscriber except the writer's own server. */
class SharedStore {
  private readonly logs = new Map<string, Uint8Array[]>()
  private readonly subscribers = new Map<string, Set<{ server: number; onUpdate: (u: Uint8Array) => void }>>()
  forServer(server: number): RoomStore {
    return {
      load: async (room) => {
        const log = this.logs.get(room) ?? []
        return log.length ? Y.mergeUpdates(log) : null
      },
      append: (room, update) => {
        let log = this.logs.get(room)
        if (!log) this.logs.set(room, (log = []))
        log.push(update)
        for (const s of this.subscribers.get(room) ?? []) if (s.server !== server) s.onUpdate(update)
      },
      flush: async () => {},
      compact: async () => {},
      close: async () => {},
      subscribe: (room, onUpdate) => {
        let set = this.subscribers.get(room)
        if (!set) this.subscribers.set(room, (set = new Set()))
        const entry = { server, onUpdate }
        set.add(entry)
        return () => set.delete(entry)
      },
    }
  }
}

const grants: Record<string, ConnectionRecord> = {
  'tok-full': { id: 'conn_full', memoryId: 'mem-1', agent: 'a', tier: 'full', tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null },
  'tok-read': { id: 'conn_read', memoryId: 'mem-1', agent: 'r', tier: 'read', tokenHash: '0'.repeat(64), createdAt: '', revokedAt: null },
}
/** A custom authorize hook, as a deployment with its own token service would plug in. */
const authorize: Authorize = (token) => {
  const connection = token ? grants[token] : undefined
  return connection ? { ok: true, connection } : { ok: false, code: CLOSE.unauthorized, reason: 'unknown token' }
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function server(store: RoomStore): Promise<SyncServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-shared-'))
  const s = await startSyncServer({ dataDir, port: 0, store, authorize, log: silentLog })
  cleanups.push(async () => {
    await s.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return s
}

function client(s: SyncServer, token: string): SyncClient {
  const c = connectMemoryDoc({ serverUrl: s.url, memoryId: 'mem-1', token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false })
  cleanups.push(() => c.destroy())
  return c
}

describe('two servers on one shared store', () => {
  it('relay each other\'s updates, and still gate them per connection', async () => {
    const shared = new SharedStore()
    const [s1, s2] = [await server(shared.forServer(1)), await server(shared.forServer(2))]
    const a = client(s1, 'tok-full')
    const b = client(s2, 'tok-full')
    const reader = client(s2, 'tok-read')
    await Promise.all([a.whenSynced(), b.whenSynced(), reader.whenSynced()])
    putObservation(a.provider.doc, observation('via-s1-1'))
    putObservation(b.provider.doc, observation('via-s2-1'))
    const both = (c: SyncClient) => ['via-s1-1', 'via-s2-1'].every((s) => readMemoryDoc(c.provider.doc).observations.has(s))
    await waitFor('both servers to relay', () => both(a) && both(b) && both(reader))
    putObservation(reader.provider.doc, observation('from-reader-1'))
    await waitFor('refusal', () => reader.status.refusals.length === 1)
    putObservation(b.provider.doc, observation('barrier-1'))
    await waitFor('barrier', () => readMemoryDoc(a.provider.doc).observations.has('barrier-1'))
    expect(readMemoryDoc(a.provider.doc).observations.has('from-reader-1')).toBe(false)
    expect(await denied(client(s1, 'nope'))).toBe(CLOSE.unauthorized)
  })
})

async function denied(c: SyncClient): Promise<number | undefined> {
  await c.whenSynced(2_000).catch(() => {})
  return c.status.closed?.code
}
