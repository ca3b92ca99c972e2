// One agent-to-memory connection, honored wherever the memory lives. The owner's device makes
// a connection for each tier; its token then works (with that tier) on another device's
// library, on the sync server and in an MCP server on a replica, and a revoke on the owner's
// device stops it on all three at once: live handles, live sockets and live MCP sessions, and
// every later attempt. Every cell of tier x (active, revoked) x surface is generated below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createMemory, type Memory } from '../../src/index'
import type { Tier } from '../../src/core/types'
import { syncedMemoryProvider } from '../../src/mcp/provider'
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/server'
import { CLOSE } from '../../src/sync/close-codes'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { readSharedConnections } from '../../src/sync/shared-connections'
import type { SyncClient } from '../../src/sync/client'
import { startHarness, type Harness } from '../server/harness'
import { call } from '../mcp/session'
import { observation } from '../sync/fixture'
import * as Y from 'yjs'

const cleanup: Array<() => Promise<unknown>> = []
let h: Harness
let owner: Memory
let ownerConn: Awaited<ReturnType<Memory['connect']>>
let device: Memory
let mcp: HttpMcpServer

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function roomConnections(memoryId: string) {
  const state = await h.server.roomState(memoryId)
  const doc = new Y.Doc()
  if (state) Y.applyUpdate(doc, state)
  return readSharedConnections(doc)
}

const note = (title: string) => ({ title, content: `${title}, by the matrix.`, entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first published program' }] })

beforeAll(async () => {
  h = await startHarness()
  cleanup.push(() => h.cleanup())
  owner = await createMemory({ name: 'matrix', indexedDB: new IDBFactory(), IDBKeyRange })
  cleanup.push(() => owner.close())
  const ownerToken = h.token(owner.info.id, 'full', 'owner device').token
  await (await owner.sync({ serverUrl: h.server.url, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
  ownerConn = await owner.connect({ agent: 'owner', tier: 'full', localOnly: true })
  await ownerConn.write(note('Seed note'))

  device = await createMemory({ name: 'matrix', id: owner.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
  cleanup.push(() => device.close())
  await (await device.sync({ serverUrl: h.server.url, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()

  const provider = syncedMemoryProvider({ memoryId: owner.info.id, serverUrl: h.server.url, syncToken: ownerToken })
  cleanup.push(() => provider.close())
  await provider.memory()
  mcp = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
  cleanup.push(() => mcp.close())
}, 60_000)

afterAll(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
})

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'matrix', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
  cleanup.push(() => client.close())
  return client
}

const TIERS: Tier[] = ['read', 'read_write', 'full']
const canWrite = (t: Tier) => t !== 'read'
const canDelete = (t: Tier) => t === 'full'

describe.each(TIERS)('a %s connection made on the owner device', (tier) => {
  let token: string
  let id: string
  let socket: SyncClient
  let mcpSession: Client
  let handle: Awaited<ReturnType<Memory['connectWithToken']>>

  beforeAll(async () => {
    const made = await owner.connect({ agent: `agent ${tier}`, tier })
    token = made.token!
    id = made.id
    await until('the connection to reach the server', async () => (await roomConnections(owner.info.id)).get(id)?.tier === tier)
  }, 30_000)

  it('library: another device accepts its token with its tier', async () => {
    await until('the connection to reach the device', () => device.listConnections().some((c) => c.id === id))
    handle = await device.connectWithToken(token)
    expect(handle.tier).toBe(tier)
    expect((await handle.recall({ query: 'mathematician program' })).entities.map((e) => e.name)).toContain('Ada Lovelace')
    const write = handle.write(note(`Library write ${tier}`))
    if (canWrite(tier)) await expect(write).resolves.toMatchObject({ slug: expect.any(String) })
    else await expect(write).rejects.toMatchObject({ code: 'forbidden' })
    const seed = (await handle.recall({})).observations.find((o) => o.title === 'Seed note')!
    const del = handle.delete(seed.slug)
    if (canDelete(tier)) {
      await expect(del).resolves.toBeDefined()
      await ownerConn.write(note('Seed note'))
    } else await expect(del).rejects.toMatchObject({ code: 'forbidden' })
  })

  it('sync server: its token opens the room with its tier', async () => {
    socket = h.client(owner.info.id, token)
    await socket.whenSynced()
    await until('the room to arrive', () => readMemoryDoc(socket.provider.doc).observations.size > 0)
    putObservation(socket.provider.doc, observation(`socket-${tier.replace('_', '-')}`))
    if (canWrite(tier)) {
      await until('the write to reach the owner', async () => readMemoryDoc(await docOfRoom()).observations.has(`socket-${tier.replace('_', '-')}`))
      expect(socket.status.refusals).toEqual([])
    } else {
      await until('the refusal', () => socket.status.refusals.length === 1)
      expect(socket.status.refusals[0]!.code).toBe('read_only')
    }
  })

  it('MCP server: its token serves the memory with its tier', async () => {
    await until('the replica to hold the connection', async () => {
      try {
        mcpSession = await mcpClient(token)
        return true
      } catch {
        return false
      }
    })
    const recalled = await call(mcpSession, 'recall', { query: 'mathematician program' })
    expect(recalled.isError).toBe(false)
    expect(recalled.body.entities.map((e: { name: string }) => e.name)).toContain('Ada Lovelace')
    const written = await call(mcpSession, 'write', note(`MCP write ${tier}`))
    expect(written.isError).toBe(!canWrite(tier))
    if (!canWrite(tier)) expect(written.body.error.code).toBe('forbidden')
  })

  it('revoked on the owner device: the live handle, socket and MCP session stop, and the token is refused everywhere', async () => {
    await owner.revoke(id)
    await until('the socket to be closed', () => socket.status.state === 'denied', 5_000)
    expect(socket.status.closed?.code).toBe(CLOSE.revoked)
    await until('the device to learn the revoke', async () => {
      try {
        await handle.recall({})
        return false
      } catch (e) {
        return (e as { code?: string }).code === 'revoked'
      }
    }, 5_000)
    await until('the MCP session to stop', async () => {
      const r = await call(mcpSession, 'recall', { query: 'mathematician' })
      return r.isError && r.body.error.code === 'revoked'
    }, 5_000)

    await expect(device.connectWithToken(token)).rejects.toMatchObject({ code: 'forbidden' })
    const again = h.client(owner.info.id, token)
    await until('the new socket to be refused', () => again.status.state === 'denied')
    expect(again.status.closed?.code).toBe(CLOSE.revoked)
    await expect(mcpClient(token)).rejects.toThrow()
  })
})

async function docOfRoom(): Promise<Y.Doc> {
  const doc = new Y.Doc()
  const state = await h.server.roomState(owner.info.id)
  if (state) Y.applyUpdate(doc, state)
  return doc
}

describe('who may change connections on the sync server', () => {
  it('a read_write token cannot add a connection, and no token can undo a revoke', async () => {
    const rw = h.client(owner.info.id, h.token(owner.info.id, 'read_write').token)
    await rw.whenSynced()
    rw.provider.doc.getMap('access').set('conn-forged1', { id: 'conn-forged1', agent: 'forged', tier: 'full', tokenHash: 'a'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null })
    await until('the refusal', () => rw.status.refusals.length === 1)
    expect(rw.status.refusals[0]!.code).toBe('not_additive')

    const full = h.client(owner.info.id, h.token(owner.info.id, 'full').token)
    await full.whenSynced()
    const revoked = [...(await roomConnections(owner.info.id)).values()].find((c) => c.revokedAt !== null)!
    await until('the revoked entry to arrive', () => full.provider.doc.getMap('access').has(revoked.id))
    full.provider.doc.getMap('access').set(revoked.id, { ...revoked, revokedAt: null })
    await until('the refusal', () => full.status.refusals.length === 1)
    expect(full.status.refusals[0]!.code).toBe('not_additive')
    expect((await roomConnections(owner.info.id)).get(revoked.id)?.revokedAt).not.toBeNull()
  })
})

describe('an MCP replica that syncs with the agent\'s own token (cairn mcp --server --token)', () => {
  it('serves with that connection\'s tier, stops when it is revoked, and cannot start again with it', async () => {
    const made = await owner.connect({ agent: 'replica agent', tier: 'read_write' })
    await until('the connection to reach the server', async () => (await roomConnections(owner.info.id)).has(made.id))
    const provider = syncedMemoryProvider({ memoryId: owner.info.id, serverUrl: h.server.url, syncToken: made.token! })
    cleanup.push(() => provider.close())
    const replica = await provider.memory()
    const conn = await replica.connectWithToken(made.token!)
    expect(conn.tier).toBe('read_write')
    await expect(conn.write(note('From the replica agent'))).resolves.toMatchObject({ slug: expect.any(String) })
    await expect(conn.delete((await conn.recall({})).observations[0]!.slug)).rejects.toMatchObject({ code: 'forbidden' })

    await owner.revoke(made.id)
    await until('the replica to stop the connection', async () => {
      try {
        await conn.recall({})
        return false
      } catch (e) {
        return (e as { code?: string }).code === 'revoked'
      }
    }, 5_000)
    const again = syncedMemoryProvider({ memoryId: owner.info.id, serverUrl: h.server.url, syncToken: made.token!, timeoutMs: 3_000 })
    cleanup.push(() => again.close())
    await expect(again.memory()).rejects.toThrow()
  })
})

describe('a memory the server holds only in storage', () => {
  it('authorizes its connections from the stored room, and a revoke made offline holds once the owner reconnects', async () => {
    const memory = await createMemory({ name: 'stored', indexedDB: new IDBFactory(), IDBKeyRange })
    cleanup.push(() => memory.close())
    const sync = await memory.sync({ serverUrl: h.server.url, token: h.token(memory.info.id, 'full').token, WebSocketPolyfill: WebSocket, crossTab: false })
    await sync.client!.whenSynced()
    const made = await memory.connect({ agent: 'late agent', tier: 'read' })
    await until('the connection to reach the server', async () => (await roomConnections(memory.info.id)).has(made.id))
    sync.client!.disconnect()
    // the room unloads once its last socket is gone, so the token is then usually checked against storage
    await new Promise((r) => setTimeout(r, 300))
    const agent = h.client(memory.info.id, made.token!)
    await agent.whenSynced()
    agent.destroy()

    await memory.revoke(made.id)
    await new Promise((r) => setTimeout(r, 300))
    const before = h.client(memory.info.id, made.token!)
    await before.whenSynced()
    before.destroy()
    sync.client!.connect()
    await until('the revoke to reach the server', async () => (await roomConnections(memory.info.id)).get(made.id)?.revokedAt != null)
    const after = h.client(memory.info.id, made.token!)
    await until('the token to be refused', () => after.status.state === 'denied')
    expect(after.status.closed?.code).toBe(CLOSE.revoked)
  })
})
