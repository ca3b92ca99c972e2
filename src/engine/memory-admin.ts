// Renaming a memory and deleting this device's copy of one: the registry row, the info the
// memory keeps in its own database, and on delete the whole database.
import { MemoryError } from '../core/errors'
import type { MemoryInfo } from '../core/types'
import { MemoryDB, RegistryDB, type IndexedDBFactory } from '../store/db'
import { stored } from '../store/storage-error'
import { isLabel, MEMORY_NAME_RULE } from '../core/identifiers'
import type { Memory } from './memory-handle'
import { ownerOf } from './owner-door'

/** Renames an open memory (a `Memory`): in this device's list and in its own database. */
export async function renameMemory(memory: Memory, name: unknown, deps: IndexedDBFactory = {}): Promise<MemoryInfo> {
  if (!isLabel(name)) throw new MemoryError('invalid_request', MEMORY_NAME_RULE)
  const info = memory.info
  const registry = new RegistryDB(deps)
  try {
    await stored(() => registry.memories.update(info.id, { name: name.trim() }))
  } finally {
    registry.close()
  }
  await ownerOf(memory).rename(name.trim())
  return memory.info
}

/** Closes the memory if it is open, then removes its database and its registry row. */
export async function deleteMemory(id: string, open: { close(): Promise<void> } | undefined, deps: IndexedDBFactory = {}): Promise<void> {
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
