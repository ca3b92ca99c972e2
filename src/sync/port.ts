// What the sync layer needs of a memory, and all it may use: the engine implements it, so the
// document bridge, the document store and the memory's sync depend on this port, core and the
// store, never on the engine.
import type { Alias, AppendixFile, MemoryInfo, Observation } from '../core/types'
import type { MemoryDB, JournalRow } from '../store/db'
import type { FirstSyncProgress } from './first-sync'
import type { SingleValuedSetting } from './layout'

/** What a local write committed, for whoever mirrors the memory into its sync document. */
export interface CommittedChange {
  observations?: { put?: Observation[]; delete?: string[] }
  /** The whole alias map after the change (variant -> canonical), when aliases changed. */
  aliases?: Alias[]
  files?: Array<{ file: AppendixFile; bytes: Uint8Array }>
  /** Proposals rejected, by pair id, so other devices do not propose them again. */
  rejected?: Array<{ id: string; pair: [string, string]; at: string }>
  /** The relationship types declared single-valued, when the owner changed them. */
  singleValued?: SingleValuedSetting
  /** The journal rows this commit wrote; hand them to `markMirrored` once the document update is saved. */
  journal?: JournalRow[]
}

/** Journal key of an observation's latest local commit. */
export const observationJournalKey = (slug: string): string => `observation:${slug}`
export const ALIASES_JOURNAL_KEY = 'aliases'

/** Changes that arrived from another device, already checked against the sync layout. */
export interface RemoteChange {
  put: Observation[]
  deleted: string[]
  /** The complete alias map now in force, when it changed. */
  aliases?: Map<string, string>
  files?: Array<{ file: AppendixFile; bytes: Uint8Array }>
  rejected?: Array<{ id: string; pair: [string, string]; at: string }>
  /** The relationship types declared single-valued, as the document now holds them. */
  singleValued?: SingleValuedSetting
}

/** A pair of entities some device decided are not one. */
export interface RejectedPair {
  id: string
  pair: [string, string]
  at: string
}

export interface SyncPort {
  readonly info: MemoryInfo
  /** The memory's database, where the document store keeps the sync document's updates. */
  readonly db: MemoryDB
  /**
   * Applies changes from another device as one commit: nothing of it is visible to reads before
   * it is saved. Resolves once it is (or fails, leaving nothing).
   */
  applyRemote(change: RemoteChange): Promise<unknown>
  /** Subscribes to local commits (never to `applyRemote`); returns the unsubscribe. */
  onCommitted(listener: (c: CommittedChange) => void): () => void
  /** Local commits whose document update may not be saved yet. */
  journalRows(): Promise<JournalRow[]>
  /** Drops journal rows whose document update is now saved. */
  markMirrored(rows: readonly JournalRow[]): Promise<void>
  /**
   * While the server's answer to this device arrives in pieces (a first sync of a large memory),
   * how far it is; null once it is whole. Recall answers from what has arrived and says so.
   */
  receiving(progress: FirstSyncProgress | null): void
  /**
   * Every observation and the alias map, for reconciling with a sync document. The observations
   * are read as they are iterated (a note kept as text is parsed when reached), so a reconcile
   * can take them in turns; notes committed meanwhile may be seen either way.
   */
  snapshotState(): { observations: Iterable<Observation>; aliases: Map<string, string> }
  /** Appendix files with their bytes, rejected pairs and the single-valued types, for seeding a sync document. */
  extrasState(): Promise<{ files: Array<{ file: AppendixFile; bytes: Uint8Array }>; rejected: RejectedPair[]; singleValued?: SingleValuedSetting }>
}
