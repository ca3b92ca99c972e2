// A connection says when it was last used on this device: stamped by a permitted call, kept
// across a reopen, and not by a refused one.
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory } from '../../src/index'

describe('last used', () => {
  it('is stamped by a permitted call, not by a refused one, and kept across a reopen', async () => {
    const indexedDB = new IDBFactory()
    const memory = await createMemory({ name: 'used', indexedDB, IDBKeyRange })
    const reader = await memory.connect({ agent: 'reader', tier: 'read' })
    const idle = await memory.connect({ agent: 'idle', tier: 'read' })
    const lastUsed = (m: typeof memory, id: string) => m.listConnections().find((c) => c.id === id)!.lastUsedAt
    expect(lastUsed(memory, reader.id)).toBeUndefined()

    await expect(idle.write({ title: 't', content: 'c', entities: [] })).rejects.toMatchObject({ code: 'forbidden' })
    expect(lastUsed(memory, idle.id)).toBeUndefined()

    const before = Date.now()
    await reader.recall({})
    const stamp = lastUsed(memory, reader.id)!
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before - 1)
    await memory.close()

    const again = await openMemory(memory.info.id, { indexedDB, IDBKeyRange })
    expect(lastUsed(again, reader.id)).toBe(stamp)
    expect(lastUsed(again, idle.id)).toBeUndefined()
    await again.close()
  })
})
