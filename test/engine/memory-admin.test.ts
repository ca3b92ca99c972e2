// Renaming a memory and deleting this device's copy: the list, a reopen and a bad name.
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { deleteMemory, renameMemory } from '../../src/engine/memory-admin'
import { listMemories, openMemory } from '../../src/index'
import { ada, fixture } from './fixture'

describe('memory admin', () => {
  it('renames a memory in the list, in the open memory and after a reopen', async () => {
    const f = await fixture()
    const deps = { indexedDB: f.factory, IDBKeyRange }
    const info = await renameMemory(f.memory, '  Ward notes ', deps)
    expect(info.name).toBe('Ward notes')
    expect(f.memory.info.name).toBe('Ward notes')
    expect((await listMemories(deps)).map((m) => m.name)).toEqual(['Ward notes'])
    await f.memory.close()
    expect((await f.reopen()).info.name).toBe('Ward notes')
  })

  it('refuses an empty or overlong name and keeps the old one', async () => {
    const f = await fixture()
    const deps = { indexedDB: f.factory, IDBKeyRange }
    for (const bad of ['', '   ', 'x'.repeat(201), 42]) await expect(renameMemory(f.memory, bad, deps)).rejects.toMatchObject({ code: 'invalid_request' })
    expect((await listMemories(deps)).map((m) => m.name)).toEqual(['test memory'])
  })

  it('deletes the open memory: gone from the list, its database removed', async () => {
    const f = await fixture()
    const deps = { indexedDB: f.factory, IDBKeyRange }
    await f.conn.write({ title: 'Ada', content: 'Ada wrote notes.', entities: [ada] })
    const id = f.memory.info.id
    await deleteMemory(id, f.memory, deps)
    expect(await listMemories(deps)).toEqual([])
    expect((await f.factory.databases()).map((d) => d.name)).not.toContain(`cairn-memory-${id}`)
    await expect(openMemory(id, deps)).rejects.toMatchObject({ code: 'not_found' })
    await expect(deleteMemory(id, undefined, deps)).rejects.toMatchObject({ code: 'not_found' })
  })
})
