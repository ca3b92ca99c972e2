// Renaming a memory, changing its visibility, and deleting this device's copy of one: the
// registry row, the info the memory keeps in its own database, and on delete the whole database.
import { MemoryError } from '../core/errors'
import type { MemoryInfo } from '../core/types'
import { MemoryDB, RegistryDB, type IndexedDBFactory } from '../store/db'
import { stored } from '../store/storage-error'
import { saveInfo } from '../store/commit'
import { isLabel, MEMORY_NAME_RULE, visibilityProblem } from '../core/identifiers'

/** What renaming needs of an open memory (a `Memory`). */
export interface NamedMemory {
  readonly info: MemoryInfo
  rename(name: string): Promise<void>
}

export async function renameMemory(memory: NamedMemory, name: unknown, deps: IndexedDBFactory = {}): Promise<MemoryInfo> {
  if (!isLabel(name)) throw new MemoryError('invalid_request', MEMORY_NAME_RULE)
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

export { VISIBILITY_PENDING_KEY } from '../store/commit'

/**
 * Stores a memory's visibility in its registry row and its own database. `owed`: the change is
 * this device's (the owner's), to be written into the sync document; false when adopting one.
 */
export function checkVisibilityChange(visibility: unknown, orgId: unknown): asserts visibility is MemoryInfo['visibility'] {
  const problem = visibilityProblem(visibility, orgId)
  if (problem !== null) throw new MemoryError('invalid_request', problem)
}

export async function storeVisibility(engine: { info: MemoryInfo; db: MemoryDB }, visibility: unknown, orgId: unknown, owed: boolean): Promise<MemoryInfo> {
  checkVisibilityChange(visibility, orgId)
  const next: Pick<MemoryInfo, 'visibility' | 'orgId'> = { visibility, orgId: visibility === 'organization' ? (orgId as string) : null }
  const registry = new RegistryDB(engine.db.deps)
  try {
    await stored(() => registry.memories.update(engine.info.id, next))
  } finally {
    registry.close()
  }
  const info = { ...engine.info, ...next }
  await saveInfo(engine.db, info, owed)
  Object.assign(engine.info, next)
  return structuredClone(engine.info)
}
