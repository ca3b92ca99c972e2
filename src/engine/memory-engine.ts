// One open memory: the committed graph in memory for reads, Dexie for durability, the indexes
// for ranking, and one committer (committer.ts) so writes never interleave. This class only
// puts the parts together; its clients are agent writes, the sync side, reads and note loading.
import type { Graph, GraphDelta } from '../core/graph'
import type { GraphSlice, GraphSliceOptions } from '../core/graph-slice'
import type {
  Alias, AppendixFile, DeleteResult, EntityDetail, MemoryInfo, MergeProposal, Observation, RecallResult, Tier, UpdateResult, WriteResult,
} from '../core/types'
import type { Timeline } from '../core/validity'
import type { EntityIndex } from '../search/entity-index'
import type { NoteIndex } from '../search/note-index'
import { INFO_KEY, saveMeta, type Through } from '../store/commit'
import type { JournalRow, MemoryDB } from '../store/db'
import type { SingleValuedSetting } from '../sync/layout'
import type { FirstSyncProgress } from '../sync/first-sync'
import type { CommittedChange, RejectedPair, RemoteChange, SyncPort } from '../sync/port'
import { AgentWrites, type Accepted } from './agent-writes'
import { Committer, type EngineState } from './committer'
import { fileInBackground, FOREGROUND_QUIET_MS, type NoteSource } from './note-loading'
import { Reads } from './reads'
import type { RecallTuning } from '../core/recall'
import { SyncSide, type ImportedSnapshot } from './sync-side'

export { VERSION_KEY, INDEX_SNAPSHOT_KEY, NOTE_INDEX_SNAPSHOT_KEY, GRAPH_SNAPSHOT_KEY, NOTE_TEXTS_KEY, NAME_BLOCKS_KEY, SINGLE_VALUED_META_KEY } from '../store/commit'
export { ALIASES_JOURNAL_KEY, observationJournalKey, type CommittedChange, type RemoteChange } from '../sync/port'
export { readNotesInto, type NoteSource } from './note-loading'
export { entityDoc, noteDoc } from './committer'
export type { Tier }

export class MemoryEngine implements SyncPort {
  private readonly c: Committer
  private readonly writes: AgentWrites
  private readonly sync: SyncSide
  private readonly reads: Reads
  /** How long each step of the open that made this engine took (ms); empty for a new memory. */
  openSteps: Record<string, number> = {}
  /** When the background filing found everything the open left for later filed (performance.now()). */
  filedAt: number | undefined

  constructor(
    readonly info: MemoryInfo,
    readonly db: MemoryDB,
    graph: Graph,
    index: EntityIndex,
    notes: NoteIndex,
    state: EngineState,
    clock: () => string = () => new Date().toISOString(),
  ) {
    this.c = new Committer(info, db, graph, index, notes, state, clock)
    this.writes = new AgentWrites(this.c)
    this.sync = new SyncSide(this.c)
    this.reads = new Reads(this.c)
  }

  /** The committed graph, for inspection and tests; never mutate it. */
  get committedGraph(): Graph {
    return this.c.graph
  }

  // ---- note loading -------------------------------------------------------------------

  /** Files what an open left for later, in slices between recalls and changes (see note-loading `fileInBackground`). */
  fileInBackground(budgetMs = 4, slice = 50, quietMs = FOREGROUND_QUIET_MS): void {
    const { graph, index, notes, loader, names } = this.c
    fileInBackground({ graph, index, notes, loader, names, isClosed: () => this.c.closed, filed: () => (this.filedAt ??= performance.now()) }, budgetMs, slice, quietMs)
  }

  /** Where the texts an open left in storage are read from (see store/open-state). */
  readNotesFrom(source: NoteSource): void {
    this.c.loader.readFrom(source)
  }

  /** Resolves once every note is held; every read and change but a recall waits for it. */
  notesHeld(): Promise<void> {
    return this.c.loader.notesHeld()
  }

  /** Runs `read` over the graph, reading first the notes it needs that are still in storage. */
  withNotes<T>(read: () => T, likely: () => Iterable<string>): Promise<T> {
    return this.c.loader.withNotes(read, likely)
  }

  /** The timeline, reading every note first if it is not built yet. */
  timelineReady(): Promise<Timeline> {
    return this.c.timelineReady()
  }

  // ---- writes (queued) ----------------------------------------------------------------

  // `through`: the connection a change comes through, stored only while it is live (store/commit `Through`)
  write(input: unknown, createdBy: string, through?: Through): Promise<WriteResult> {
    return this.writes.write(input, createdBy, through)
  }
  update(slug: unknown, patchInput: unknown, through?: Through): Promise<UpdateResult> {
    return this.writes.update(slug, patchInput, through)
  }
  delete(slug: unknown, through?: Through): Promise<DeleteResult> {
    return this.writes.delete(slug, through)
  }
  storeFile(input: unknown, createdBy: string, through?: Through): Promise<AppendixFile> {
    return this.writes.storeFile(input, createdBy, through)
  }
  consolidate(through?: Through): Promise<MergeProposal[]> {
    return this.writes.consolidate(through)
  }
  /** `tier` is the accepting connection's: below `full`, only a merge the names alone justify. */
  acceptProposal(id: unknown, options: unknown = {}, tier: Tier = 'full', createdBy = 'owner', through?: Through): Promise<Accepted> {
    return this.writes.acceptProposal(id, options, tier, createdBy, through)
  }
  rejectProposal(id: unknown, through?: Through): Promise<MergeProposal> {
    return this.writes.rejectProposal(id, through)
  }
  /** The relationship types this memory declares single-valued (stored form, sorted). */
  singleValuedTypes(): string[] {
    return this.writes.singleValuedTypes()
  }
  setSingleValued(types: unknown, through?: Through): Promise<string[]> {
    return this.writes.setSingleValued(types, through)
  }

  /** Saves a new name in the memory's own database; `info` shows it at once. */
  async rename(name: string): Promise<void> {
    this.c.assertOpen()
    await saveMeta(this.db, INFO_KEY, { ...this.info, name })
    this.info.name = name
  }

  // ---- the sync side --------------------------------------------------------------------

  /** Observations written elsewhere (a migration, an import) as one commit, keeping their slugs. */
  importObservations(observations: Observation[], aliases: Alias[]): Promise<number> {
    return this.sync.importSnapshot({ observations, aliases })
  }
  /** A memory's content written elsewhere (a backup), with pairs already rejected, as one commit. */
  importSnapshot(snapshot: ImportedSnapshot): Promise<number> {
    return this.sync.importSnapshot(snapshot)
  }
  applyRemote(incoming: RemoteChange): Promise<GraphDelta> {
    return this.sync.applyRemote(incoming)
  }
  journalRows(): Promise<JournalRow[]> {
    return this.sync.journalRows()
  }
  receiving(progress: FirstSyncProgress | null): void {
    this.reads.receiving = progress
  }
  markMirrored(rows: readonly JournalRow[]): Promise<void> {
    return this.sync.markMirrored(rows)
  }
  onCommitted(listener: (c: CommittedChange) => void): () => void {
    return this.c.onCommitted(listener)
  }

  /** Subscribes to every change readers can see, once indexed (see `Committer.onChanged`). */
  onChanged(listener: () => void): () => void {
    return this.c.onChanged(listener)
  }
  snapshotState(): { observations: Iterable<Observation>; aliases: Map<string, string> } {
    return this.sync.snapshotState()
  }
  extrasState(): Promise<{ files: Array<{ file: AppendixFile; bytes: Uint8Array }>; rejected: RejectedPair[]; singleValued?: SingleValuedSetting }> {
    return this.sync.extrasState()
  }

  // ---- reads (never queued; they see the last committed state) -------------------------

  recall(request: unknown): Promise<RecallResult> {
    return this.reads.recall(request)
  }
  findNotes(text: string, limit: number): Promise<Array<{ slug: string; words: string[] }>> {
    return this.reads.findNotes(text, limit)
  }

  /** The weights of a note's score (see `Reads.tuning`): set only by the eval, through `engineOf`. */
  get recallTuning(): Readonly<RecallTuning> {
    return this.reads.tuning
  }

  set recallTuning(tuning: Readonly<RecallTuning>) {
    this.reads.tuning = tuning
  }
  notesOfName(name: unknown): readonly string[] {
    return this.reads.notesOfName(name)
  }
  getObservation(slug: unknown): Observation {
    return this.reads.getObservation(slug)
  }
  graphSlice(opts: GraphSliceOptions = {}): GraphSlice {
    return this.reads.graphSlice(opts)
  }
  inspect(name: unknown): EntityDetail {
    return this.reads.inspect(name)
  }
  listFiles(): AppendixFile[] {
    return this.reads.listFiles()
  }
  readFile(path: unknown): Promise<{ file: AppendixFile; data: Uint8Array }> {
    return this.reads.readFile(path)
  }
  listProposals(): MergeProposal[] {
    return this.reads.listProposals()
  }
  storedAliases(): Promise<Alias[]> {
    return this.reads.storedAliases()
  }

  // ---- the saved open state --------------------------------------------------------------

  saveIndexSnapshot(): Promise<void> {
    return this.c.saveIndexSnapshot()
  }
  /** Saves the index through the write queue, so it never races a commit. */
  queueSnapshot(): Promise<void> {
    return this.c.queueSnapshot()
  }

  close(): void {
    this.c.close()
  }
}
