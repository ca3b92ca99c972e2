// Sync servers sharing rooms and tokens through a real Redis (a throwaway redis-server on
// 127.0.0.1): relaying between servers, tier checks per connection, compaction into a
// snapshot, a revoke reaching every server, and a Redis that would not keep acknowledged
// updates refused at start.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { silentLog } from '../../src/server/log'
import { RedisAccess } from '../../src/server/redis-access'
import { connectRedis } from '../../src/server/redis-connection'
import { RedisClientOwners } from '../../src/server/redis-owners'
import { RedisRoomStore } from '../../src/server/redis-room-store'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { memoryMaps } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { startRedis } from '../support/redis'
import { redisPerFile } from '../support/redis-per-file'
import { asClient, refusedAs, send, slugs } from '../hostile/peer'
import { observation, waitFor } from '../sync/fixture'

const shared = redisPerFile('t')
const { cleanups, newPrefix } = shared

async function server(prefix: string): Promise<SyncServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-redis-srv-'))
  const s = await startSyncServer({ dataDir, port: 0, redis: { url: shared.redis.url, prefix }, log: silentLog })
  cleanups.push(async () => {
    await s.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return s
}

function client(s: SyncServer, memoryId: string, token: string, doc = createMemoryDoc()): SyncClient {
  const c = connectMemoryDoc({ serverUrl: s.url, memoryId, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  cleanups.push(() => c.destroy())
  return c
}

const has = (c: SyncClient, slug: string) => readMemoryDoc(c.provider.doc).observations.has(slug)

describe('sync servers on one Redis', () => {
  it('relay each other\'s clients, gate each connection by its tier, and a fresh server loads it all', async () => {
    const prefix = newPrefix()
    const [s1, s2] = [await server(prefix), await server(prefix)]
    const writer = (await s1.access.add({ memoryId: 'mem-1', tier: 'read_write', agent: 'w' })).token
    const reader = (await s2.access.add({ memoryId: 'mem-1', tier: 'read', agent: 'r' })).token
    const a = client(s1, 'mem-1', writer)
    const b = client(s2, 'mem-1', writer)
    const r = client(s2, 'mem-1', reader)
    await Promise.all([a.whenSynced(), b.whenSynced(), r.whenSynced()])
    putObservation(a.provider.doc, observation('via-s1-1'))
    putObservation(b.provider.doc, observation('via-s2-1'))
    const both = (c: SyncClient) => has(c, 'via-s1-1') && has(c, 'via-s2-1')
    await waitFor('both servers to relay', () => both(a) && both(b) && both(r))
    putObservation(r.provider.doc, observation('from-reader-1'))
    await waitFor('refusal', () => r.status.refusals.length === 1)
    putObservation(b.provider.doc, observation('barrier-1'))
    await waitFor('barrier', () => has(a, 'barrier-1'))
    expect(has(a, 'from-reader-1')).toBe(false)

    const s3 = await server(prefix)
    const doc = createMemoryDoc()
    Y.applyUpdate(doc, (await s3.roomState('mem-1'))!)
    expect([...readMemoryDoc(doc).observations.keys()].sort()).toEqual(['barrier-1', 'via-s1-1', 'via-s2-1'])
    expect(() => s1.tokens.add({ memoryId: 'mem-1', agent: 'x' })).toThrow(/Redis/)
  })

  it('share who owns each Yjs client id: a device goes on writing through any server, another token may not write as it', async () => {
    const prefix = newPrefix()
    const [s1, s2] = [await server(prefix), await server(prefix)]
    const token = (await s1.access.add({ memoryId: 'mem-6', tier: 'read_write', agent: 'device' })).token
    const watcher = client(s2, 'mem-6', (await s2.access.add({ memoryId: 'mem-6', tier: 'read', agent: 'watcher' })).token)
    const doc = createMemoryDoc()
    const first = client(s1, 'mem-6', token, doc)
    await Promise.all([first.whenSynced(), watcher.whenSynced()])
    putObservation(doc, observation('via-s1-1'))
    // s2 holds the room (the watcher) and gets the device's client through the stream
    await waitFor('the note on s2', () => has(watcher, 'via-s1-1'))
    first.destroy()
    putObservation(doc, observation('offline-1'))
    const second = client(s2, 'mem-6', token, doc)
    await waitFor('the offline note through s2', () => has(watcher, 'offline-1'))
    putObservation(doc, observation('via-s2-1'))
    await waitFor('a write through s2', () => has(watcher, 'via-s2-1'))
    expect(second.status.refusals).toEqual([])

    // a server that loads the room afresh reads the owners from Redis
    second.destroy()
    const s3 = await server(prefix)
    putObservation(doc, observation('offline-2'))
    const third = client(s3, 'mem-6', token, doc)
    await waitFor('the second offline note through s3', () => has(watcher, 'offline-2'))
    expect(third.status.refusals).toEqual([])

    // another token may not extend the device's client on any server
    const attackerToken = (await s1.access.add({ memoryId: 'mem-6', tier: 'read_write', agent: 'attacker' })).token
    for (const s of [s1, s2, s3]) {
      const attacker = client(s, 'mem-6', attackerToken)
      await attacker.whenSynced()
      send(attacker, asClient(attacker.provider.doc, doc.clientID, (d) => putObservation(d, observation('forged-1'))))
      expect(await refusedAs(attacker, 1)).toBe('not_owner')
    }
    expect(slugs(watcher.provider.doc)).toEqual(['offline-1', 'offline-2', 'via-s1-1', 'via-s2-1'])
  }, 30_000)

  it('of two servers binding one client id at once, one wins and the other learns who', async () => {
    const prefix = newPrefix()
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const [a, b] = [new RedisClientOwners(conn, { prefix }), new RedisClientOwners(conn, { prefix })]
    const results = await Promise.allSettled([a.bind('mem-7', [11, 12], 'conn_a'), b.bind('mem-7', [12, 13], 'conn_b')])
    expect(results[0]!.status).toBe('fulfilled')
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'conflict' } })
    expect([b.ownerOf('mem-7', 12), b.ownerOf('mem-7', 13)]).toEqual(['conn_a', 'conn_b'])
    const c = new RedisClientOwners(conn, { prefix })
    await c.load('mem-7')
    expect([11, 12, 13].map((id) => c.ownerOf('mem-7', id))).toEqual(['conn_a', 'conn_a', 'conn_b'])
  })

  it('closes a revoked token\'s sockets on every server, and refuses it afterwards', async () => {
    const prefix = newPrefix()
    const servers = [await server(prefix), await server(prefix), await server(prefix)]
    const { token, connection } = await servers[0]!.access.add({ memoryId: 'mem-2', tier: 'read_write', agent: 'leaver' })
    const clients = servers.map((s) => client(s, 'mem-2', token))
    await Promise.all(clients.map((c) => c.whenSynced()))
    const started = performance.now()
    const closedAt: number[] = []
    for (const c of clients) c.on('status', (s) => { if (s.state === 'denied' && s.closed?.code === CLOSE.revoked) closedAt.push(performance.now() - started) })
    await servers[1]!.access.revoke(connection.id)
    await waitFor('every server to close the socket', () => closedAt.length === 3)
    console.info(`revoke reached 3 servers in ${Math.max(...closedAt).toFixed(1)} ms`)
    const again = client(servers[2]!, 'mem-2', token)
    await again.whenSynced(2_000).catch(() => {})
    expect(again.status.closed?.code).toBe(CLOSE.revoked)
    expect((await servers[0]!.access.list('mem-2'))[0]!.revokedAt).not.toBeNull()
  })

  it('folds a room\'s stream into a snapshot and trims it, losing nothing', async () => {
    const prefix = newPrefix()
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const store = new RedisRoomStore(conn, { prefix, retentionMs: 0, compactAfterEntries: 1_000 })
    const writer = createMemoryDoc()
    const updates: Uint8Array[] = []
    writer.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < 30; i++) putObservation(writer, observation(`note-${i}`))
    for (const u of updates) await store.persist('mem-3', u)
    const stream = `${prefix}room:mem-3:log`
    expect(await conn.command.sendCommand(['XLEN', stream])).toBe(30)
    await store.compact('mem-3')
    // retention 0: everything but the newest entry's millisecond is trimmed
    expect(await conn.command.sendCommand<number>(['XLEN', stream])).toBeLessThan(30)
    putObservation(writer, observation('after-compaction'))
    await store.persist('mem-3', updates.at(-1)!)
    const doc = createMemoryDoc()
    Y.applyUpdate(doc, (await store.load('mem-3'))!)
    expect(memoryMaps(doc).observations.size).toBe(31)
    expect(Y.encodeStateVector(doc)).toEqual(Y.encodeStateVector(writer))
    await store.close()
  })

  it('a server whose cursor fell behind a compaction catches up from the snapshot', async () => {
    const prefix = newPrefix()
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const follower = new RedisRoomStore(conn, { prefix })
    const writerStore = new RedisRoomStore(conn, { prefix, retentionMs: 0 })
    cleanups.push(() => follower.close())
    // the follower loads the room, then (slow to follow it) another server writes and compacts
    expect(await follower.load('mem-4')).toBeNull()
    const writer = createMemoryDoc()
    const updates: Uint8Array[] = []
    writer.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < 20; i++) {
      putObservation(writer, observation(`lagged-${i}`))
      await writerStore.persist('mem-4', updates.at(-1)!)
      await new Promise((r) => setTimeout(r, 2))
    }
    await writerStore.compact('mem-4')
    expect(await conn.command.sendCommand<number>(['XLEN', `${prefix}room:mem-4:log`])).toBeLessThan(20)
    const doc = createMemoryDoc()
    follower.subscribe('mem-4', (u) => Y.applyUpdate(doc, u))
    await waitFor('the follower to hold every update', () => memoryMaps(doc).observations.size === 20)
    expect(Y.encodeStateVector(doc)).toEqual(Y.encodeStateVector(writer))
  })

  it('an append while Redis is down fails after its timeout with storage_failed, and works again once Redis is back', async () => {
    const own = await startRedis()
    cleanups.push(() => own.stop())
    const conn = await connectRedis(own.url)
    cleanups.push(() => conn.close())
    const store = new RedisRoomStore(conn, { persistTimeoutMs: 1_000 })
    await store.persist('mem-5', new Uint8Array([0, 0]))
    await own.kill()
    const started = Date.now()
    await expect(store.persist('mem-5', new Uint8Array([0, 1]))).rejects.toMatchObject({ code: 'storage_failed' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    await store.flush()
    await own.start()
    await store.persist('mem-5', new Uint8Array([0, 2]))
    expect(await conn.command.sendCommand(['XLEN', 'cairn:room:mem-5:log'])).toBe(2)
  }, 20_000)

  it('refuses to start on a Redis that does not fsync every write', async () => {
    const volatile = await startRedis({ durable: false })
    cleanups.push(() => volatile.stop())
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-redis-srv-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    await expect(startSyncServer({ dataDir, port: 0, redis: volatile.url, log: silentLog })).rejects.toMatchObject({ code: 'storage_failed', message: /appendfsync always/ })
    await expect(startSyncServer({ dataDir, port: 0, redis: 'http://127.0.0.1:1', log: silentLog })).rejects.toMatchObject({ code: 'invalid_request' })
  })

  it('the CLI adds and revokes tokens in Redis', async () => {
    const run = promisify(execFile)
    const cli = ['--import', 'tsx', 'src/server/cli.ts']
    const added = await run('node', [...cli, 'token', 'add', '--redis', shared.redis.url, '--memory', 'mem-cli', '--agent', 'cli-agent'])
    const id = /connection (conn_[0-9a-f]+)/.exec(added.stdout)?.[1]
    expect(id).toBeDefined()
    const revoked = await run('node', [...cli, 'token', 'revoke', '--redis', shared.redis.url, '--id', id!])
    expect(revoked.stdout).toContain(`revoked ${id}`)
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const listed = await (await RedisAccess.open(conn, { watch: false })).list('mem-cli')
    expect(listed).toMatchObject([{ id, agent: 'cli-agent', tier: 'read_write', revokedAt: expect.stringMatching(/^\d{4}-/) }])
  }, 30_000)
})
