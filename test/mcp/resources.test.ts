// MCP as the specification has it: tool annotations that say what each tool does to the memory,
// and the memory's observations and entities as resources a client can list, page and read.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { OPERATION_TIER } from '../../src/core/access'
import { TOOL_ANNOTATIONS } from '../../src/mcp/annotations'
import { createMcpServer } from '../../src/mcp/server'
import { TOOLS } from '../../src/tools/definitions'
import { ada, engine, fixture } from '../engine/fixture'

async function connected(tier: 'read' | 'full' = 'full') {
  const f = await fixture({ tier })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await createMcpServer(f.conn, f.memory).connect(a)
  const client = new Client({ name: 'resources-test', version: '0' })
  await client.connect(b)
  return { ...f, client }
}

describe('MCP tool annotations', () => {
  it('mark exactly the read-tier tools read-only, and update, delete, merges and the single-valued declaration destructive', async () => {
    const { client, memory } = await connected()
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort())
    for (const t of tools) {
      const def = TOOLS.find((d) => d.name === t.name)!
      expect(t.annotations?.readOnlyHint, t.name).toBe(OPERATION_TIER[def.operation] === 'read')
      expect(t.annotations?.openWorldHint, t.name).toBe(false)
      if (!t.annotations?.readOnlyHint) expect(typeof t.annotations?.destructiveHint, t.name).toBe('boolean')
    }
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name).sort()
    expect(destructive).toEqual(['accept_proposal', 'delete', 'set_single_valued', 'update'])
    expect(Object.keys(TOOL_ANNOTATIONS).sort()).toEqual(TOOLS.map((t) => t.name).sort())
    await memory.close()
  })
})

describe('MCP resources', () => {
  it('lists observations newest first, then entities, and reads each as JSON', async () => {
    const { client, conn, memory } = await connected()
    const first = await conn.write({ title: 'Ada', content: 'Ada wrote the notes.', entities: [ada] })
    await new Promise((r) => setTimeout(r, 5)) // distinct updatedAt, so "newest first" has one answer
    const second = await conn.write({ title: 'Engine', content: 'The Engine was designed.', entities: [engine, { name: 'Ada Lovelace', type: 'person', description: ada.description }], relationships: [{ source: 'Ada Lovelace', type: 'works_on', target: 'Analytical Engine' }] })
    const { resources, nextCursor } = await client.listResources()
    expect(nextCursor).toBeUndefined()
    expect(resources.map((r) => r.uri)).toEqual([`cairn://observation/${second.slug}`, `cairn://observation/${first.slug}`, 'cairn://entity/Ada%20Lovelace', 'cairn://entity/Analytical%20Engine'])
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['cairn://observation/{slug}', 'cairn://entity/{name}'])

    const note = await client.readResource({ uri: `cairn://observation/${first.slug}` })
    expect(JSON.parse((note.contents[0] as { text: string }).text)).toMatchObject({ slug: first.slug, content: 'Ada wrote the notes.' })
    // entity URIs resolve through normalization, as a name typed by a person would
    const entity = await client.readResource({ uri: 'cairn://entity/ada%20LOVELACE' })
    const detail = JSON.parse((entity.contents[0] as { text: string }).text)
    expect(detail.entity.name).toBe('Ada Lovelace')
    expect(detail.outgoing).toEqual([expect.objectContaining({ type: 'works_on', target: 'Analytical Engine' })])

    await expect(client.readResource({ uri: 'cairn://entity/Nobody' })).rejects.toThrow(/no entity named "Nobody"/)
    await expect(client.readResource({ uri: 'https://example.com/x' })).rejects.toThrow(/unknown resource/)
    await memory.close()
  })

  it('pages a long list with a cursor and refuses a cursor it did not give', async () => {
    const { client, conn, memory } = await connected()
    for (let i = 0; i < 120; i++) await conn.write({ title: `n${i}`, content: `note ${i}`, entities: [{ name: `Thing ${i}`, type: 'thing', description: `thing number ${i}` }] })
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await client.listResources(cursor ? { cursor } : {})
      seen.push(...page.resources.map((r) => r.uri))
      cursor = page.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(2)
    expect(new Set(seen).size).toBe(240)
    await expect(client.listResources({ cursor: 'abc' })).rejects.toThrow(/cursor/)
    await memory.close()
  })
})
