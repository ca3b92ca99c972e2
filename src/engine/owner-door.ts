// Owner-level access to a memory for the package's own exports, imports and hosts (backup,
// interop, the MCP resources, the CLI, the worker host): reads and imports without a
// connection's tier. `Memory` carries none of it, so the published types show only what an
// application may call; `src/index.ts` does not export this module.
import type { GraphView } from '../core/graph'
import type { Alias, AppendixFile, EntityDetail, MergeProposal, Observation } from '../core/types'
import type { RemoteChange } from '../sync/port'
import { engineBehind } from './engine-door'
import type { Memory } from './memory-handle'
import type { ImportedSnapshot } from './sync-side'

export interface MemoryOwner {
  /**
   * Calls `listener` after every change readers can see (a write here, or one from another tab
   * or device), once it is indexed; returns the unsubscribe. For screens that follow the memory.
   */
  onChange(listener: () => void): () => void
  /** Resolves once every note is held: an open may leave the texts in storage a while, and `committed` reads them. */
  notesHeld(): Promise<void>
  /** The committed graph, read-only; wait for `notesHeld` before reading its notes. */
  readonly committed: GraphView
  /** An entity with its edges, notes and merged names, whatever name or merged variant it is asked by. */
  inspect(name: string): EntityDetail
  listFiles(): AppendixFile[]
  readFile(path: string): Promise<{ file: AppendixFile; data: Uint8Array }>
  listProposals(): MergeProposal[]
  /** The alias rows as stored (with when each merge was recorded). */
  storedAliases(): Promise<Alias[]>
  /** Observations written elsewhere, kept with their slugs, in one transaction; each must satisfy the write contract. */
  importObservations(observations: Observation[], aliases: Alias[]): Promise<number>
  /** A memory's content from a backup: observations, aliases and pairs already rejected, in one transaction. */
  importSnapshot(snapshot: ImportedSnapshot): Promise<number>
  /** An appendix file recorded as `createdBy` made it (a restored backup keeps its authors). */
  storeFileAs(input: unknown, createdBy: string): Promise<AppendixFile>
  /** Merges content from another copy of this memory (a backup), as a sync peer's change is merged. */
  mergeChange(change: RemoteChange): Promise<void>
  /** Saves a new name in the memory's database (the device's registry is the caller's). */
  rename(name: string): Promise<void>
}

/** The owner's operations on `memory`; throws `invalid_request` for anything not made by createMemory or openMemory. */
export function ownerOf(memory: Memory): MemoryOwner {
  const engine = engineBehind(memory)
  return {
    onChange: (listener) => engine.onChanged(listener),
    notesHeld: () => engine.notesHeld(),
    get committed() {
      return engine.committedGraph
    },
    inspect: (name) => engine.inspect(name),
    listFiles: () => engine.listFiles(),
    readFile: (path) => engine.readFile(path),
    listProposals: () => engine.listProposals(),
    storedAliases: () => engine.storedAliases(),
    importObservations: (observations, aliases) => engine.importObservations(observations, aliases),
    importSnapshot: (snapshot) => engine.importSnapshot(snapshot),
    storeFileAs: (input, createdBy) => engine.storeFile(input, createdBy),
    mergeChange: async (change) => void (await engine.applyRemote(change)),
    rename: (name) => engine.rename(name),
  }
}
