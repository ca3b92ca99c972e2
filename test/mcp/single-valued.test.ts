// An MCP client declares the memory's single-valued relationship types, writes two notes where the
// second supersedes the first (the write schema carries validFrom and supersedes), and recalls as
// of two dates; a read_write session may not change the declaration.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import type { Connection, Memory } from '../../src/index'
import { createMcpServer } from '../../src/mcp/server'
import { fixture } from '../engine/fixture'
import { call } from './session'

async function session(conn: Connection, memory: Memory): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair()
  await createMcpServer(conn, memory).connect(a)
  const client = new Client({ name: 'single-valued-test', version: '0' })
  await client.connect(b)
  return client
}

const dana = { name: 'Dana', type: 'person', description: 'An engineer on the payments team' }
const job = (org: string, extra: Record<string, unknown>) => ({ title: `Dana works at ${org}`, content: `Dana works at ${org}.`, entities: [dana, { name: org, type: 'organization', description: `The company ${org}` }], relationships: [{ source: 'Dana', type: 'works_at', target: org }], ...extra })

describe('MCP and facts that change', () => {
  it('lists the time fields in the schemas, declares single-valued types at full tier, and supersedes', async () => {
    const { memory, conn } = await fixture()
    const owner = await session(conn, memory)
    const { tools } = await owner.listTools()
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, { properties?: Record<string, unknown>; items?: { properties?: Record<string, unknown> } }> }
    expect(Object.keys(schema('write').properties)).toEqual(expect.arrayContaining(['validFrom', 'validTo', 'supersedes']))
    expect(Object.keys(schema('write').properties.relationships!.items!.properties!)).toEqual(expect.arrayContaining(['validFrom', 'validTo']))
    expect(Object.keys(schema('update').properties)).toEqual(expect.arrayContaining(['validFrom', 'validTo', 'supersedes']))
    expect(Object.keys(schema('recall').properties)).toEqual(expect.arrayContaining(['asOf', 'history']))
    expect(Object.keys(schema('set_single_valued').properties)).toEqual(['types'])

    const rw = await session(await memory.connect({ agent: 'writer', tier: 'read_write' }), memory)
    const refused = await call(rw, 'set_single_valued', { types: ['works_at'] })
    expect(refused.isError).toBe(true)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await call(owner, 'set_single_valued', { types: ['works_at'] })).body).toEqual(['works_at'])
    expect((await call(rw, 'list_single_valued')).body).toEqual(['works_at'])

    const acme = (await call(rw, 'write', job('Acme', { validFrom: '2020-03-01' }))).body as { slug: string }
    const beta = (await call(rw, 'write', job('Beta', { validFrom: '2024-01-15', supersedes: [acme.slug] }))).body as { slug: string }
    const now = (await call(rw, 'recall', { query: 'where does Dana work' })).body
    expect(now.observations.map((o: { slug: string }) => o.slug)).toEqual([beta.slug])
    expect(now.superseded).toBe(1)
    const then = (await call(rw, 'recall', { query: 'where does Dana work', asOf: '2022-06-01' })).body
    expect(then.observations.map((o: { slug: string }) => o.slug)).toEqual([acme.slug])
    const history = (await call(rw, 'inspect_entity', { name: 'Dana' })).body.history
    expect(history.map((h: { slug: string; current: boolean; supersededBy?: string[] }) => [h.slug, h.current, h.supersededBy])).toEqual([
      [acme.slug, false, [beta.slug]],
      [beta.slug, true, undefined],
    ])
    const bad = await call(rw, 'write', job('Gamma', { validFrom: '2025-01-01', validTo: '2024-01-01' }))
    expect(bad.isError).toBe(true)
    expect(JSON.stringify(bad.body)).toContain('validTo')
    await memory.close()
  })
})
