// The one committer of an open memory: it queues each change, has the graph preview it, saves it
// (store/commit), applies it, tells the listeners (the sync document) and brings the indexes up
// to date. Agent writes, the sync side, reads and note loading are its clients.
import { MemoryError } from '../core/errors'
import { DERIVATION_RULES, type Graph, type GraphDelta, type PreviewedChanges } from '../core/graph'
import type { Alias, AppendixFile, Entity, MemoryInfo, MergeProposal, Observation } from '../core/types'
import type { SavedNameBlocks } from '../core/variants'
import { hasValidity, Timeline } from '../core/validity'
import type { EntityDoc, EntityIndex } from '../search/entity-index'
import type { NoteDoc, NoteIndex } from '../search/note-index'
import { importCommit, saveCommit, saveOpenState, type GraphCommit, type Through } from '../store/commit'
import type { JournalRow, MemoryDB } from '../store/db'
import { importInPieces, whileImporting } from '../store/import-pieces'
import { packIndex, packOpenStateInSteps } from '../store/open-state'
import { stepsInTurns } from '../core/steps'
import { stored } from '../store/storage-error'
import type { SingleValuedSetting } from '../sync/layout'
import { observationJournalKey, type CommittedChange } from '../sync/port'
import { nextTurn, turns } from '../sync/turns'
import { NameFiling } from './name-filing'
import { NoteLoader } from './note-loading'
import { WriteQueue } from './queue'
import { randomId } from './tokens'

/** Quiet time after the last write before the index is saved, so a closed tab rarely re-embeds. */
const SNAPSHOT_DELAY_MS = 2_000

/** What an open read besides the graph and the indexes (a new memory: nothing). */
export interface EngineState {
  proposals: MergeProposal[]
  files: AppendixFile[]
  version: number
  /** The version the saved open state holds, when it holds this one's graph and indexes. */
  savedVersion?: number
  savedNames?: () => Promise<SavedNameBlocks | undefined>
  hasValidity?: boolean
  singleValued?: SingleValuedSetting
}

type NoteChange = { put: Observation[]; deleted: string[] }

export class Committer {
  private readonly queue: WriteQueue
  readonly proposals = new Map<string, MergeProposal>()
  readonly files = new Map<string, AppendixFile>()
  /** The relationship types declared single-valued (see core/supersede), as the sync document holds them. */
  singleValued: SingleValuedSetting | undefined
  closed = false
  /** Counts committed graph changes, so a saved index snapshot can tell whether it is current. */
  private committedVersion: number
  private savedVersion = -1
  private snapshotTimer: ReturnType<typeof setTimeout> | undefined
  /** Set when indexing a commit failed: snapshots saved since then must not claim to match the graph. */
  private indexBehind = false
  private readonly commitListeners = new Set<(c: CommittedChange) => void>()
  private readonly changeListeners = new Set<() => void>()
  /** Stamps this engine's journal rows; unique across engines and reopenings. */
  private readonly journalSession = randomId(10)
  private journalSeq = 0
  /**
   * The notes carrying world time (see core/validity), kept in step with the graph; undefined
   * until built from every note, which an open of a memory holding such notes waits for.
   */
  private timeline: Timeline | undefined
  readonly loader: NoteLoader
  readonly names: NameFiling

  constructor(
    readonly info: MemoryInfo,
    readonly db: MemoryDB,
    readonly graph: Graph,
    readonly index: EntityIndex,
    readonly notes: NoteIndex,
    state: EngineState,
    readonly clock: () => string,
  ) {
    this.queue = new WriteQueue(`cairn-write-${info.id}`)
    this.committedVersion = state.version
    if (state.savedVersion !== undefined) this.savedVersion = state.savedVersion
    this.loader = new NoteLoader(graph, () => this.closed)
    this.names = new NameFiling(graph, state.savedNames)
    for (const p of state.proposals) this.proposals.set(p.id, p)
    for (const f of state.files) this.files.set(f.path, f)
    this.singleValued = state.singleValued
    // a memory no note of which ever carried world time starts with an empty timeline
    if (!state.hasValidity) this.timeline = new Timeline((slug) => this.graph.getObservation(slug))
  }

  get version(): number {
    return this.committedVersion
  }

  assertOpen(): void {
    if (this.closed) throw new MemoryError('invalid_request', `memory "${this.info.name}" is closed; open it again`)
  }

  /**
   * Runs a change in the write queue, once every note is held; a change of one note ('one
   * note') reads from storage only the notes it touches instead (see `commitObservation`),
   * so a write right after an open does not wait for them all.
   */
  enqueue<T>(task: () => Promise<T>, reads: 'every note' | 'one note' = 'every note'): Promise<T> {
    this.assertOpen()
    return this.queue.run(async () => {
      this.assertOpen()
      this.loader.foregroundStarted()
      try {
        if (reads === 'every note') await this.loader.notesHeld()
        return await task()
      } finally {
        this.loader.foregroundEnded()
      }
    })
  }

  requireObservation(slug: unknown): Observation {
    if (typeof slug !== 'string' || !slug) throw new MemoryError('invalid_request', 'a slug (string) is required')
    const o = this.graph.getObservation(slug)
    if (!o) throw new MemoryError('not_found', `no observation with slug "${slug}"`, { slug })
    return o
  }

  // ---- the commits --------------------------------------------------------------------

  /**
   * Computes the graph change without showing it (so concurrent reads never see it), commits it
   * in one Dexie transaction (refused if `through` names a revoked connection), then applies the
   * computed change.
   */
  async commitObservation(slug: string, next: Observation | undefined, beforeCommit?: (delta: GraphDelta) => void, through?: Through): Promise<GraphDelta> {
    // the preview asks for the notes it files that are still in storage, having changed nothing;
    // one that files every note needs them all
    if (!this.graph.filesByChange) await this.loader.notesHeld()
    const delta = await this.loader.withNotes(() => this.graph.preview(slug, next), () => [slug])
    beforeCommit?.(delta)
    const journal = [this.journalRow(observationJournalKey(slug))]
    await saveCommit(this.db, { version: this.committedVersion + 1, delta, observations: next ? { put: [next], delete: [] } : { put: [], delete: [slug] }, journal, through })
    this.graph.applyPreviewed(slug, next, delta)
    this.committedVersion++
    this.emit({ observations: next ? { put: [next] } : { delete: [slug] }, journal })
    await this.reindex(delta, next ? { put: [next], deleted: [] } : { put: [], deleted: [slug] })
    return delta
  }

  /**
   * Commits a batch the graph previewed (`Graph.previewChanges`): saved with `commit` (which
   * takes the next version), then applied; a failed save drops the preview, leaving the graph
   * as it was. `told` is what listeners hear of it, none for a change from another device.
   */
  async commitPreviewed(previewed: PreviewedChanges, commit: Omit<GraphCommit, 'version' | 'delta'>, notes: NoteChange | undefined, told?: CommittedChange): Promise<GraphDelta> {
    try {
      await saveCommit(this.db, { ...commit, version: this.committedVersion + 1, delta: previewed.delta })
    } catch (err) {
      this.graph.discardPreviewedChanges(previewed)
      throw err
    }
    this.graph.applyPreviewedChanges(previewed)
    this.committedVersion++
    if (told) this.emit(told)
    await this.reindex(previewed.delta, notes)
    return previewed.delta
  }

  /**
   * Commits an import: its notes and every derived row written in pieces (store/import-pieces),
   * then the graph `next`, derived once, takes the live graph's place.
   */
  async commitImport(next: Graph, c: { fresh: Observation[]; aliases: Alias[]; proposals: MergeProposal[]; notesJournal: JournalRow[]; aliasesJournal: JournalRow[] }, told: CommittedChange | ((graph: Graph) => CommittedChange)): Promise<void> {
    const db = this.db
    // the commit proper, after the notes and the derived rows went in pieces: even a small
    // import rewrites every derived row, which in one transaction of a large memory would leave
    // Chromium an undo log of all of them
    const last = importCommit(db, { version: this.committedVersion + 1, hasValidity: c.fresh.some(hasValidity), aliases: c.aliases, proposals: c.proposals, journal: c.aliasesJournal })
    const plan = { observations: c.fresh, journal: c.notesJournal, entities: [...next.entities.values()], relationships: [...next.relationships.values()], edgeBacking: [...next.edgeBacking()], ...last }
    await stored(() => whileImporting(this.info.id, () => importInPieces(db, plan)))
    for (const p of c.proposals) this.proposals.set(p.id, p)
    const removed = this.graph.replaceWith(next)
    this.committedVersion++
    this.emit(typeof told === 'function' ? told(this.graph) : told)
    // every entity may have gained backers; the index skips those whose text did not change
    await this.reindex({ ...emptyDelta(), ...removed, upsertedEntities: [...this.graph.entities.values()] }, { put: c.fresh, deleted: [] })
  }

  journalRow(key: string): JournalRow {
    return { key, stamp: `${this.journalSession}:${++this.journalSeq}` }
  }

  /** Subscribes to local commits (never to applyRemote); returns the unsubscribe. */
  onCommitted(listener: (c: CommittedChange) => void): () => void {
    this.commitListeners.add(listener)
    return () => this.commitListeners.delete(listener)
  }

  emit(change: CommittedChange): void {
    for (const listener of this.commitListeners) listener(change)
  }

  /**
   * Subscribes to every change readers can see, local or from another tab or device, called once
   * the change is indexed (a recall made then finds it); returns the unsubscribe.
   */
  onChanged(listener: () => void): () => void {
    this.changeListeners.add(listener)
    return () => this.changeListeners.delete(listener)
  }

  changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener()
      } catch {
        // a reader's failure is its own; the commit is done
      }
    }
  }

  // ---- the indexes and the timeline, after each commit -------------------------------

  private async reindex(delta: GraphDelta, notes?: NoteChange): Promise<void> {
    this.keepTimeline(notes)
    try {
      await this.reindexNow(delta, notes)
    } catch (err) {
      // the commit stands; the indexes miss it until an open brings them up to the graph
      this.indexBehind = true
      throw err
    }
    this.changed()
  }

  private async reindexNow(delta: GraphDelta, notes?: NoteChange): Promise<void> {
    if (notes?.deleted.length) await this.notes.remove(notes.deleted)
    if (notes?.put.length) await this.notes.upsert(notes.put.map(noteDoc))
    this.names.take(delta)
    if (delta.removedEntities.length) await this.index.remove(delta.removedEntities)
    // degree-only changes need no re-embedding; the index skips unchanged texts
    const docs = delta.upsertedEntities.map(entityDoc)
    if (docs.length) await this.index.upsert(docs)
    this.scheduleSnapshot()
  }

  /** The timeline when it can be had without reading notes from storage: built now if every note is held. */
  timelineNow(): Timeline | undefined {
    if (!this.timeline && this.graph.notesInStorage === 0) this.timeline = Timeline.of(this.graph.allObservations(), (slug) => this.graph.getObservation(slug))
    return this.timeline
  }

  /** The timeline, reading every note first if it is not built yet. */
  async timelineReady(): Promise<Timeline> {
    if (!this.timelineNow()) await this.loader.notesHeld()
    return this.timelineNow()!
  }

  /** Keeps the timeline in step with a committed change of notes, before anything reads it. */
  private keepTimeline(notes: NoteChange | undefined): void {
    if (!this.timeline || !notes) return
    try {
      for (const slug of notes.deleted) this.timeline.delete(slug)
      for (const o of notes.put) this.timeline.put(o)
    } catch {
      // a note it names still in storage: built again from every note when next needed
      this.timeline = undefined
    }
  }

  // ---- the saved open state ---------------------------------------------------------

  async saveIndexSnapshot(): Promise<void> {
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer)
    this.snapshotTimer = undefined
    const version = this.committedVersion
    if (version === this.savedVersion) return
    await this.loader.notesHeld()
    // in steps, a task each, and the notes' texts in turns: at 100,000 notes, at once, a save
    // held the worker (and every recall asked meanwhile) for seconds. It runs in the write
    // queue, so nothing changes the graph in between.
    const snapshot = await this.index.snapshot()
    await nextTurn()
    const notes = await this.notes.snapshot(turns())
    await nextTurn()
    const texts = await this.noteTexts()
    // a snapshot that may miss a commit is saved without the id that lets open trust it whole
    const saveId = this.indexBehind ? undefined : randomId(12)
    const state = await stepsInTurns(packOpenStateInSteps(saveId ?? randomId(12), version, DERIVATION_RULES, texts, this.graph.entities.values(), this.graph.relationships.values(), undefined, this.graph.dormantBacking(), (e) => this.names.signatureOf(e)), nextTurn)
    await nextTurn()
    await saveOpenState(this.db, { entityIndex: packIndex(version, saveId, snapshot), noteIndex: packIndex(version, saveId, notes), ...(state ? { state } : {}) })
    this.savedVersion = version
  }

  /** Every note's saved text (see `NoteShelf.texts`), read a turn at a time. */
  private async noteTexts(): Promise<Array<[string, string, number]>> {
    const out: Array<[string, string, number]> = []
    const pace = turns()
    for (const text of this.graph.observationTexts()) {
      out.push(text)
      await pace()
    }
    return out
  }

  /** Saves the index through the write queue, so it never races a commit. */
  queueSnapshot(): Promise<void> {
    return this.enqueue(() => this.saveIndexSnapshot())
  }

  private scheduleSnapshot(): void {
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer)
    const timer = setTimeout(() => {
      this.snapshotTimer = undefined
      if (!this.closed) void this.queue.run(() => this.saveIndexSnapshot()).catch(() => undefined)
    }, SNAPSHOT_DELAY_MS)
    // in Node a pending save must not keep the process alive
    ;(timer as { unref?: () => void }).unref?.()
    this.snapshotTimer = timer
  }

  close(): void {
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer)
    this.closed = true
    this.db.close()
  }
}

/** What the search index sees of an entity: every description it was given can match. */
export function entityDoc(e: Entity): EntityDoc {
  return { key: e.key, name: e.name, type: e.type, description: [e.description, ...e.descriptions].join('\n'), queries: e.queries }
}

/** What the note index sees of an observation. */
export function noteDoc(o: Observation): NoteDoc {
  return { slug: o.slug, text: `${o.title}\n${o.content}` }
}

export function emptyDelta(): GraphDelta {
  return { upsertedEntities: [], removedEntities: [], upsertedRelationships: [], removedRelationships: [], backing: [] }
}

/** Names a caller's value in an error message without trusting it to stringify. */
export function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 200)) : `(a ${value === null ? 'null' : typeof value})`
}
