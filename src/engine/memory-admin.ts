// Renaming a memory and deleting this device's copy of one: the registry row, the name the
// memory keeps in its own database, and on delete the whole database.
import { MemoryError } from '../core/errors'
import type { MemoryInfo } from '../core/types'
import { MemoryDB, RegistryDB, type IndexedDBFactory } from '../store/db'
import { stored } from '../store/storage-error'
import type { Memory } from './memory-handle'

export async function renameMemory(memory: Memory, name: unknown, deps: IndexedDBFactory = {}): Promise<MemoryInfo> {
  if (typeof name !== 'string' || !name.trim() || name.trim().length > 200) throw new MemoryError('invalid_request', 'a memory needs a name (1 to 200 characters)')
  const info = memory.info
  const registry = new RegistryDB(deps)
  try {
    await stored(() => registry.memories.update(info.id, { name: name.trim() }))
  } finally {
    registry.close()
  }
  await memory.rename(name.trim())
  return memory.info
}

/** Closes the memory if it is open, then removes its database and its registry row. */
export async function deleteMemory(id: string, open: Memory | undefined, deps: IndexedDBFactory = {}): Promise<void> {
  const registry = new RegistryDB(deps)
  try {
    if (!(await registry.memories.get(id))) throw new MemoryError('not_found', `no memory with id "${id}" on this device`, { id })
    await open?.close()
    await stored(() => new MemoryDB(id, deps).delete())
    await stored(() => registry.memories.delete(id))
  } finally {
    registry.close()
  }
}
