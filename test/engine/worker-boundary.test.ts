// The engine behind a Comlink boundary behaves like the in-process library, errors included.
import 'fake-indexeddb/auto'
import { describe, expect, it } from 'vitest'
import { connectEngine } from '../../src/engine/client'
import { exposeEngine } from '../../src/engine/host'
import { MemoryError } from '../../src/index'

describe('engine over a message channel', () => {
  it('creates, writes, recalls and reports MemoryError codes across the boundary', async () => {
    const { port1, port2 } = new MessageChannel()
    exposeEngine(port1)
    const client = connectEngine(port2)
    const memory = await client.createMemory({ name: 'over the wire' })
    const conn = await memory.connect({ agent: 'page', tier: 'read_write' })
    const res = await conn.write({ title: 'Ada', content: 'Ada notes', entities: [{ name: 'Ada Lovelace', type: 'person', description: 'mathematician and writer' }] })
    expect(res.slug).toMatch(/^ada-/)
    const r = await conn.recall({ query: 'mathematician' })
    expect(r.entities[0]!.name).toBe('Ada Lovelace')
    const err = await conn.delete(res.slug).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(MemoryError)
    expect((err as MemoryError).code).toBe('forbidden')
    expect((err as MemoryError).details.needed).toBe('full')
    const info = await memory.info
    expect((await client.listMemories()).map((m) => m.id)).toContain(info.id)
    port1.close()
    port2.close()
  })
})
