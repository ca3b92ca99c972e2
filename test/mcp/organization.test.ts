// `cairn mcp --server URL --memory ID --org-credential X`: an organization member's agent gets
// the organization's memory over stdio, read-only, from the member credential alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { createMemory, type Memory } from '../../src/index'
import { startHarness, type Harness } from '../server/harness'
import { call } from './session'

let h: Harness
let owner: Memory
const cleanup: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  h = await startHarness()
  cleanup.push(() => h.cleanup())
}, 30_000)
afterAll(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
})

describe('cairn mcp with a member credential', () => {
  it('serves an organization memory read-only over stdio', async () => {
    const org = h.server.orgs.create('Acme')
    owner = await createMemory({ name: 'handbook', indexedDB: new IDBFactory(), IDBKeyRange, visibility: 'organization', orgId: org.id })
    cleanup.push(() => owner.close())
    const sync = await owner.sync({ serverUrl: h.server.url, token: h.token(owner.info.id, 'full').token, WebSocketPolyfill: WebSocket, crossTab: false })
    await sync.client!.whenSynced()
    await (await owner.connect({ agent: 'owner', tier: 'full', localOnly: true })).write({ title: 'Seed', content: 'Ada wrote the first program.', entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first published program' }] })
    const { credential } = h.server.orgs.addMember(org.id, { kind: 'agent', name: 'desktop agent' })
    const deadline = Date.now() + 10_000
    while (h.server.orgs.memories(org.id).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    h.server.orgs.accept(org.id, owner.info.id)

    const c = new Client({ name: 'org-test', version: '0.0.0' })
    cleanup.push(() => c.close())
    await c.connect(new StdioClientTransport({ command: 'npx', args: ['tsx', 'src/mcp/cli.ts', '--server', h.server.url, '--memory', owner.info.id, '--org-credential', credential], cwd: process.cwd(), env: getDefaultEnvironment(), stderr: 'pipe' }))
    const recalled = await call(c, 'recall', { query: 'mathematician program' })
    expect(recalled.isError).toBe(false)
    expect(recalled.body.entities.map((e: { name: string }) => e.name)).toContain('Ada Lovelace')
    const written = await call(c, 'write', { title: 'A member writes', content: 'Not allowed.' })
    expect(written.isError).toBe(true)
    expect(written.body.error.code).toBe('forbidden')
  }, 60_000)
})
