// The MCP server on a replica that syncs through a real sync server on 127.0.0.1: what a
// device wrote is recalled by the agent, and what the agent writes reaches the device.
import { afterEach, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createMemory, type Memory } from '../../src/index'
import { syncedMemoryProvider, type MemoryProvider } from '../../src/mcp/provider'
import { startHttpMcpServer } from '../../src/mcp/server'
import { startHarness, type Harness } from '../server/harness'
import { engineOf } from '../../src/internals'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import * as Y from 'yjs'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
})

async function until(check: () => boolean | Promise<boolean>, ms = 8_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 25))
  }
}

function text(result: unknown): unknown {
  const content = (result as { content: Array<{ type: string; text: string }> }).content
  return JSON.parse(content[0]!.text)
}

describe('MCP on a synced replica', () => {
  it('shares one memory with a device through the sync server', async () => {
    const h: Harness = await startHarness()
    cleanup.push(() => h.cleanup())
    const device: Memory = await createMemory({ name: 'shared', indexedDB: new IDBFactory(), IDBKeyRange })
    cleanup.push(() => device.close())
    const { token } = h.token(device.info.id, 'full')
    const deviceSync = await device.sync({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false })
    await deviceSync.client!.whenSynced()
    const deviceConn = await device.connect({ agent: 'app', tier: 'full' })
    const met = await deviceConn.write({ title: 'Met Grace', content: 'Grace Hopper leads the compiler work.', entities: [{ name: 'Grace Hopper', type: 'person', description: 'Computer scientist who built the first compiler' }] })
    await deviceSync.settled()
    // settled means in the device's document; the replica can only find what the server holds
    await until(async () => {
      const state = await h.server.roomState(device.info.id)
      const doc = new Y.Doc()
      if (state) Y.applyUpdate(doc, state)
      return readMemoryDoc(doc).observations.has(met.slug)
    })

    const provider: MemoryProvider = syncedMemoryProvider({ memoryId: device.info.id, serverUrl: h.server.url, syncToken: token })
    cleanup.push(() => provider.close())
    const replica = await provider.memory()
    const agentConn = await replica.connect({ agent: 'desktop-agent', tier: 'read_write' })
    const server = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
    cleanup.push(() => server.close())
    const client = new Client({ name: 'cairn-test', version: '0.0.0' })
    cleanup.push(() => client.close())
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${agentConn.token}` } } }))

    const recalled = text(await client.callTool({ name: 'recall', arguments: { query: 'compiler scientist' } })) as { entities: Array<{ name: string }> }
    expect(recalled.entities.map((e) => e.name)).toContain('Grace Hopper')

    const written = text(await client.callTool({
      name: 'write',
      arguments: { title: 'COBOL', content: 'Grace Hopper shaped COBOL.', entities: [{ name: 'COBOL', type: 'project', description: 'Business programming language' }], relationships: [{ source: 'Grace Hopper', type: 'shaped', target: 'COBOL' }] },
    })) as { slug: string }
    await until(async () => {
      await deviceSync.settled()
      return engineOf(device).committedGraph.getObservation(written.slug) !== undefined
    })
    expect((await deviceConn.inspect('Grace Hopper')).outgoing.map((r) => r.target)).toContain('COBOL')
  }, 30_000)
})
