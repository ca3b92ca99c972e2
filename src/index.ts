// Cairn's public library API: everything an application or agent extension may depend on.
import { Memory, listMemories, type CreateMemoryOptions, type OpenMemoryOptions } from './engine/memory-handle'

export { MemoryError, isMemoryError, type ErrorCode } from './core/errors'
export { Memory, listMemories, migrateMemory, BM25_ONLY, type CreateMemoryOptions, type OpenMemoryOptions } from './engine/memory-handle'
export { Connection, type StoreFileInput } from './engine/connection'
export { LIMITS, MAX_FILE_BYTES } from './core/limits'
export { DEFAULT_LIMITS, MAX_LIMITS } from './core/recall'
export { OPERATION_TIER, TIERS, DEFAULT_TIER } from './core/access'
export { normalizeName } from './core/normalize'
export { decodeJoinCode, encodeJoinCode, isJoinCode, type JoinCode } from './core/join-code'
export type { Embedder } from './search/embedder'
export { createDefaultEmbedder, type DefaultEmbedderOptions } from './search/default-embedder'
export { createStaticEmbedder, type StaticEmbedderOptions } from './search/static-embedder'
export { createUseLiteEmbedder, type UseLiteEmbedderOptions } from './search/use-lite-embedder'
export { configureOrt, type OrtSettings } from './search/ort'
export { listOrganizationMemories, joinOrganizationMemory, type OrganizationListing, type OrganizationAccess, type JoinOrganizationMemory } from './engine/organizations'
export { exportMemory, importMemory, BACKUP_FORMAT, type MemoryBackup, type ImportOptions } from './engine/backup'
export { dispatchTool, type ToolOutcome, type ToolError } from './tools/dispatch'
export { TOOLS, findTool, toolListing, toolInputSchema, type ToolDefinition } from './tools/definitions'
export type * from './core/types'

/** Creates a memory; its retrieval config is fixed from now on. */
export function createMemory(options: CreateMemoryOptions): Promise<Memory> {
  return Memory.create(options)
}

/** Opens a memory by id; fails with `config_locked` if the embedder differs from its config. */
export function openMemory(id: string, options: OpenMemoryOptions = {}): Promise<Memory> {
  return Memory.open(id, options)
}
