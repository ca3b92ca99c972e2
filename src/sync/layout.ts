// The shape of a memory's Y.Doc: eight top-level maps, each holding plain JSON values, so a
// write replaces a whole value atomically and concurrent writes resolve per key.
import * as Y from 'yjs'

/** Root type names; nothing else belongs at the top level of a memory document. */
export const ROOTS = {
  observations: 'observations',
  aliases: 'aliases',
  rejected: 'rejected',
  files: 'files',
  fileBytes: 'fileBytes',
  /** Agent-to-memory connections by id (token hashes, never tokens), so a sync server authorizes with them. */
  access: 'access',
  /** Who may see the memory beyond its connections: private, or one organization (src/sync/visibility.ts). */
  visibility: 'visibility',
  /** The memory's shared settings, written by its owner: `singleValued`, the relationship types that hold one target at a time. */
  settings: 'settings',
} as const

export type RootName = (typeof ROOTS)[keyof typeof ROOTS]
export const ROOT_NAMES: readonly RootName[] = Object.values(ROOTS)

/** A consolidation proposal that was rejected, remembered so the pair is not proposed again. */
export interface RejectedPair {
  pair: [string, string]
  at: string
}

/** The settings map's one key so far. */
export const SINGLE_VALUED_KEY = 'singleValued'

/** Relationship types declared single-valued (`works_at`: one employer at a time), and when. */
export interface SingleValuedSetting {
  types: string[]
  at: string
}

/**
 * The maps hold Observation, Alias, RejectedPair, AppendixFile and Uint8Array values, but a
 * peer can write anything, so they are typed `unknown` and read through the checks of validate.ts.
 */
export type MemoryMaps = Record<RootName, Y.Map<unknown>>

export function memoryMaps(doc: Y.Doc): MemoryMaps {
  return {
    observations: doc.getMap(ROOTS.observations),
    aliases: doc.getMap(ROOTS.aliases),
    rejected: doc.getMap(ROOTS.rejected),
    files: doc.getMap(ROOTS.files),
    fileBytes: doc.getMap(ROOTS.fileBytes),
    access: doc.getMap(ROOTS.access),
    visibility: doc.getMap(ROOTS.visibility),
    settings: doc.getMap(ROOTS.settings),
  }
}
