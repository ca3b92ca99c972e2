// The engine worker's first answer, the memory list read with IndexedDB itself, agrees with the
// registry Dexie keeps, and a device without a registry gets an empty list and no database.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { Memory, listMemories } from '../../src/index'
import { RegistryDB } from '../../src/store/db'
import { readMemoryList, REGISTRY_DATABASE, REGISTRY_TABLE } from '../../src/engine/registry-read'

const device = (): { indexedDB: IDBFactory; IDBKeyRange: typeof IDBKeyRange } => ({ indexedDB: new IDBFactory(), IDBKeyRange })

describe('reading the memory list without Dexie', () => {
  it("names RegistryDB's database and table", () => {
    const registry = new RegistryDB(device())
    expect(registry.name).toBe(REGISTRY_DATABASE)
    expect(registry.tables.map((t) => t.name)).toContain(REGISTRY_TABLE)
  })

  it('finds no memories on a new device, and leaves no database behind', async () => {
    const deps = device()
    expect(await readMemoryList(deps.indexedDB)).toEqual([])
    expect((await deps.indexedDB.databases()).map((d) => d.name)).toEqual([])
    // the engine creates the registry as usual afterwards
    const memory = await Memory.create({ ...deps, name: 'after an empty read' })
    expect((await readMemoryList(deps.indexedDB)).map((m) => m.name)).toEqual(['after an empty read'])
    await memory.close()
  })

  it('returns the rows the engine lists, in the same order', async () => {
    const deps = device()
    const made = [] as Memory[]
    for (const name of ['Field notes', 'Reading list', 'Kitchen']) made.push(await Memory.create({ ...deps, name }))
    const viaDexie = await listMemories(deps)
    expect(viaDexie).toHaveLength(3)
    expect(await readMemoryList(deps.indexedDB)).toEqual(viaDexie)
    for (const m of made) await m.close()
  })

  it('reports a failed open as storage_failed', async () => {
    const broken = { open: () => { throw new DOMException('disk gone', 'UnknownError') } } as unknown as IDBFactory
    await expect(readMemoryList(broken)).rejects.toMatchObject({ code: 'storage_failed', details: { reason: 'UnknownError' } })
  })
})
