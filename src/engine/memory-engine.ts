// One open memory: the committed graph in memory for reads, Dexie for durability,
// the entity index for ranking, and one write queue so writes never interleave.
import { checkEndpoints, validateObservationInput, validatePatch } from '../core/contract'
import { applyMergeToAliases, collapseAliases, findPossibleDuplicates, namesMayMerge, proposeMerges, VariantIndex } from '../core/consolidate'
import { nameSignature, type SavedNameBlocks } from '../core/variants'
import { applyPatch, reviewHints } from '../core/edit'
import { MemoryError } from '../core/errors'
import { DERIVATION_RULES, Graph, type GraphDelta, type PreviewedChanges } from '../core/graph'
import { NoteInStorage } from '../core/note-shelf'
import { graphSlice, type GraphSlice, type GraphSliceOptions } from '../core/graph-slice'
import { neighborhoodOf, neighborhoodsOf } from '../core/neighborhood'
import { normalizeName } from '../core/normalize'
import { assembleSemantic, draftSemantic, assembleStructural, parseRecallRequest, DEFAULT_TUNING, type RecallFilter, type RecallTuning } from '../core/recall'
import { QueryEvidence, type QueryTerm } from '../core/evidence'
import { makeSlug } from '../core/slug'
import { parseSingleValued, proposeSupersessions, supersessionNote } from '../core/supersede'
import { sameJson } from '../core/same-json'
import type { SingleValuedSetting } from '../sync/layout'
import { checkSupersedes, hasValidity, historyOf, splitTimeRequest, Timeline, TimeView, type TimeRequest } from '../core/validity'
import type {
  Alias, AppendixFile, DeleteResult, Entity, EntityDetail, MemoryInfo, MergeProposal, Observation, PossibleDuplicate, RecallResult, Relationship, Tier, UpdateResult, WriteResult, RecallSignals, WriteWarning
} from '../core/types'
import type { MemoryDB, JournalRow } from '../store/db'
import { ALIASES_JOURNAL_KEY, observationJournalKey, type CommittedChange, type RemoteChange, type SyncPort } from '../sync/port'
import { importInPieces, whileImporting } from '../store/import-pieces'
import { saveCommit, VALIDITY_KEY, VERSION_KEY, type GraphCommit } from '../store/commit'
import { packIndex, packOpenState } from '../store/open-state'
import type { EntityDoc, EntityIndex, RankedEntity } from '../search/entity-index'
import type { NoteDoc, NoteIndex } from '../search/note-index'
import { validateFileInput, type FileInput } from './files'
import { taskScheduler } from './next-task'
import { WriteQueue } from './queue'
import { stored } from '../store/storage-error'
import { randomId, sha256Hex } from './tokens'

/** Entities an index query asks for beyond the cap, so filters and expansion have room. */
const SEARCH_HEADROOM = 4
export { VERSION_KEY } from '../store/commit'
export const INDEX_SNAPSHOT_KEY = 'entityIndex'
export const NOTE_INDEX_SNAPSHOT_KEY = 'noteIndex'
/** The meta row of the single-valued relationship types (a `SingleValuedSetting`). */
export const SINGLE_VALUED_META_KEY = 'singleValued'
/** How long background filing waits after a recall, so that a run of recalls goes uncut (ms). */
const RECALL_QUIET_MS = 40
/** Keys a restored index puts in its maps in one go of the background work: about a millisecond. */
const KEYS_PER_PART = 1_000
/** Notes the note index offers a recall: enough to reach past the entities' own cap. */
const NOTE_CANDIDATES = 300
/** What a write that names no entity is told: it is found, but only by its own words. */
const NO_ENTITY_WARNING: WriteWarning = {
  code: 'no_entity',
  message: 'This note names no entity: recall finds it by its own words alone. Name the people, places, projects or things it is about (entities, with relationships) to link it into the graph, so that recalling them brings it back too.',
}
/** Entities found by vector alone that a semantic recall checks for a close paraphrase of the query. */
const PARAPHRASE_CANDIDATES = 8
/** Journal rows dropped per transaction once mirrored. */
const JOURNAL_ROWS_PER_PART = 1000
/** Reads of notes a recall makes, beyond those it reads up front, before it waits for all texts. */
const NOTE_READ_ROUNDS = 8
/**
 * Past this share of the notes in storage, reading them row by row costs more than reading all
 * the saved texts: a row read costs several times a note's share of the few large text parts.
 */
const ROW_READ_SHARE = 0.2
/** Rows read one by one whatever the share: fewer than this read faster than one text part. */
const ROW_READ_MIN = 200

/** The prefix of the meta rows of the texts saved with the open state, part by part (see store/open-state). */
export const NOTE_TEXTS_KEY = 'derivedGraphTexts:'
/** The meta row of the entity names' blocks of the saved state (see store/open-state `SavedNameRow`). */
export const NAME_BLOCKS_KEY = 'derivedGraphNames'

/** Where the texts of notes an open left in storage are read from. */
export interface NoteSource {
  /** Part `part` of the save's texts: its notes' slugs and texts, and how many parts there are; undefined when that part is gone or of another save. */
  part(part: number): Promise<{ parts: number; from: number; slugs: readonly string[]; text: string; ends: ArrayLike<number> } | undefined>
  /** Every observation row, when the parts are not there. */
  rows(): Promise<Observation[]>
  /** These notes, from their rows (a note not found is left out). */
  some(slugs: string[]): Promise<Observation[]>
}
/**
 * The derived graph, packed (see store/open-state) and saved with the index snapshots and the
 * notes' texts (`NOTE_TEXTS_KEY`): open reads this one row instead of every observation row,
 * and takes the graph as it is instead of deriving it.
 */
export const GRAPH_SNAPSHOT_KEY = 'derivedGraph'

/** Quiet time after the last write before the index is saved, so a closed tab rarely re-embeds. */
const SNAPSHOT_DELAY_MS = 2_000

export { ALIASES_JOURNAL_KEY, observationJournalKey, type CommittedChange, type RemoteChange } from '../sync/port'

/**
 * Reads every note still in storage from `source`, part after part, each once `mayGoOn` allows;
 * a note the source does not have fails, as the stored memory is not whole.
 */
export async function readNotesInto(graph: Graph, source: NoteSource, mayGoOn: () => Promise<void> = () => Promise.resolve()): Promise<void> {
  for (let part = 0, parts = 1; part < parts && graph.notesInStorage > 0; part++) {
    await mayGoOn()
    const read = await stored(() => source.part(part))
    if (!read) break
    parts = read.parts
    graph.takeInNotePart(read.from, read.slugs, read.text, read.ends)
  }
  // parts gone or of another save: the rows have the rest
  if (graph.notesInStorage > 0) graph.takeInNotes(await stored(() => source.rows()))
  const left = graph.notesInStorage
  // only another tab changing the memory since this one opened it gets here: open it again
  if (left > 0) throw new MemoryError('storage_failed', `${left} observations of this memory could not be read from storage; open the memory again`, { missing: left })
}

/** Resolves after `ms`, without keeping a Node process alive. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => (setTimeout(resolve, ms) as { unref?: () => void }).unref?.())
}

export class MemoryEngine implements SyncPort {
  private readonly queue: WriteQueue
  private proposals = new Map<string, MergeProposal>()
  private files = new Map<string, AppendixFile>()
  private closed = false
  private snapshotTimer: ReturnType<typeof setTimeout> | undefined
  private savedVersion = -1
  /**
   * Kept in step with the graph so a write's possible-duplicate check is a lookup, not a scan.
   * An opened memory's names are filed into it after the open (`fileInBackground`), since
   * signing 100,000 names costs seconds; the first write that needs it files the rest.
   */
  private readonly variants = new VariantIndex()
  /** Keys of entities whose names are not filed into `variants` yet, from `unnamedAt` on. */
  private unnamed: string[]
  private unnamedAt = 0
  /** Reads the opened save's name blocks, searched for the names not filed into `variants` yet. */
  private savedNames: (() => Promise<SavedNameBlocks | undefined>) | undefined
  private savedNamesRead: Promise<SavedNameBlocks | undefined> | undefined
  /** Counts committed graph changes, so a saved index snapshot can tell whether it is current. */
  private version: number
  private readonly commitListeners = new Set<(c: CommittedChange) => void>()
  /** Stamps this engine's journal rows; unique across engines and reopenings. */
  private readonly journalSession = randomId(10)
  private journalSeq = 0
  /** How long each step of the open that made this engine took (ms); empty for a new memory. */
  openSteps: Record<string, number> = {}
  /** Recalls awaiting their indexes: background filing waits for them. */
  private recalling = 0
  /**
   * When the last recall ended (performance.now()): filing waits for a pause in a run of recalls.
   * It starts as the engine is made, so that an open's first recall, usually asked at once, goes first.
   */
  private lastRecallAt = performance.now()
  /** When the background filing found everything the open left for later filed (performance.now()). */
  filedAt: number | undefined
  /** Set when indexing a commit failed: snapshots saved since then must not claim to match the graph. */
  private indexBehind = false
  /** Where notes the open left in storage come from, and the read of all of them once started. */
  private noteSource: NoteSource | undefined
  private allNotesRead: Promise<void> | undefined
  /** Set once a read or change waits for every note: the parts left are then read back to back. */
  private notesWanted = false
  /**
   * The notes carrying world time (see core/validity), kept in step with the graph; undefined
   * until built from every note, which an open of a memory holding such notes waits for.
   */
  private timeline: Timeline | undefined
  /** The relationship types declared single-valued (see core/supersede), as the sync document holds them. */
  private singleValued: SingleValuedSetting | undefined

  constructor(
    readonly info: MemoryInfo,
    readonly db: MemoryDB,
    private readonly graph: Graph,
    private readonly index: EntityIndex,
    private readonly notes: NoteIndex,
    state: { proposals: MergeProposal[]; files: AppendixFile[]; version: number; savedVersion?: number; savedNames?: () => Promise<SavedNameBlocks | undefined>; hasValidity?: boolean; singleValued?: SingleValuedSetting },
    private readonly clock: () => string = () => new Date().toISOString(),
  ) {
    this.queue = new WriteQueue(`cairn-write-${info.id}`)
    this.version = state.version
    if (state.savedVersion !== undefined) this.savedVersion = state.savedVersion
    this.unnamed = [...graph.entities.keys()]
    this.savedNames = state.savedNames
    for (const p of state.proposals) this.proposals.set(p.id, p)
    for (const f of state.files) this.files.set(f.path, f)
    // a memory no note of which ever carried world time starts with an empty timeline
    this.singleValued = state.singleValued
    if (!state.hasValidity) this.timeline = new Timeline((slug) => this.graph.getObservation(slug))
  }

  /** The timeline when it can be had without reading notes from storage: built now if every note is held. */
  private timelineNow(): Timeline | undefined {
    if (!this.timeline && this.graph.notesInStorage === 0) this.timeline = Timeline.of(this.graph.allObservations(), (slug) => this.graph.getObservation(slug))
    return this.timeline
  }

  /** The timeline, reading every note first if it is not built yet. */
  async timelineReady(): Promise<Timeline> {
    if (!this.timelineNow()) await this.notesHeld()
    return this.timelineNow()!
  }

  /** Keeps the timeline in step with a committed change of notes, before anything reads it. */
  private keepTimeline(notes: { put: Observation[]; deleted: string[] } | undefined): void {
    if (!this.timeline || !notes) return
    try {
      for (const slug of notes.deleted) this.timeline.delete(slug)
      for (const o of notes.put) this.timeline.put(o)
    } catch {
      // a note it names still in storage: built again from every note when next needed
      this.timeline = undefined
    }
  }

  /** One recall's view of time, or none when nothing needs filtering or marking. */
  private async timeView(time: TimeRequest): Promise<TimeView | undefined> {
    const timeline = await this.timelineReady()
    if (timeline.empty && time.asOf === undefined) return undefined
    return new TimeView(timeline, this.graph, time, this.clock())
  }

  /**
   * Files what an open left for later, a few milliseconds per task, so that reads answer in
   * between: a graph read from stored rows (`Graph.fromRows`) into the indexes a change needs,
   * then the entity names into the duplicate check. A change arriving first files the rest at
   * once. The budget is time, not a count: a recall waiting behind a task of 1,000 notes waited
   * tens of milliseconds at 100,000 notes on a busy machine. Recalls go first, and a run of
   * them (an agent asking one question after another) is not cut into: filing waits until
   * `quietMs` have passed without one, as its slices and the garbage they leave slowed each
   * recall of such a run by a fifth at 100,000 notes. Before filing, the indexes build their
   * maps by key, which a restore leaves for later (see `KeySlots`).
   */
  fileInBackground(budgetMs = 4, slice = 50, quietMs = RECALL_QUIET_MS): void {
    const step = () => {
      if (this.closed) return nextTask.close()
      if (this.recalling > 0) return later(quietMs)
      const quietFor = performance.now() - this.lastRecallAt
      if (quietFor < quietMs) return later(quietMs - quietFor)
      const until = performance.now() + budgetMs
      // the indexes' and the saved edges' maps by key first, a part at a time: the first change
      // after an open then finds its keys without scanning a restore's 100,000
      while (!keysMapped && performance.now() < until) keysMapped = this.index.mapKeys(KEYS_PER_PART) && this.notes.mapKeys(KEYS_PER_PART) && this.graph.mapKeys(KEYS_PER_PART)
      if (!keysMapped) return nextTask.run(step)
      // filing reads every note: the texts the open left in storage come in first
      if (this.graph.notesInStorage > 0) {
        this.readNotes().then(() => later(0), () => nextTask.close())
        return
      }
      let done = false
      while (!done && performance.now() < until) done = this.graph.fileSome(slice) && this.fileNames(slice)
      if (done) {
        this.filedAt ??= performance.now()
        nextTask.close()
      }
      // the next slice as a task of its own: chained zero-delay timers are held 4 ms each
      else nextTask.run(step)
    }
    const later = (ms: number) => {
      const timer = setTimeout(step, ms)
      // in Node it must not keep the process alive
      ;(timer as { unref?: () => void }).unref?.()
    }
    const nextTask = taskScheduler()
    let keysMapped = false
    later(0)
  }

  /**
   * Reads the texts an open left in storage (see store/open-state) from `source`: those a recall
   * shows as it needs them, and all of them before anything else reads or changes notes.
   */
  readNotesFrom(source: NoteSource): void {
    this.noteSource = source
  }

  /**
   * Resolves once every note is held, reading those the open left in storage if that has not
   * begun. Every read and change but a recall waits for it; a failed read is tried again by the
   * next caller.
   */
  notesHeld(): Promise<void> {
    this.notesWanted = true
    return this.readNotes()
  }

  /**
   * Reads every note the open left in storage, part after part. Until someone waits for them
   * (`notesHeld`), each part waits for a pause in recalls, so that a recall waits behind one
   * part at most.
   */
  private readNotes(): Promise<void> {
    if (this.graph.notesInStorage === 0) return this.allNotesRead ?? Promise.resolve()
    if (!this.noteSource) return Promise.reject(new MemoryError('storage_failed', 'this memory was opened without a way to read its notes'))
    if (!this.allNotesRead) {
      const quiet = async () => {
        while (!this.notesWanted && !this.closed && (this.recalling > 0 || performance.now() - this.lastRecallAt < RECALL_QUIET_MS)) await pause(RECALL_QUIET_MS)
      }
      this.allNotesRead = readNotesInto(this.graph, this.noteSource, quiet)
      this.allNotesRead.catch(() => (this.allNotesRead = undefined))
    }
    return this.allNotesRead
  }

  /**
   * Runs `read` over the graph while notes may still be in storage: first reading those of
   * `likely` it does not hold, then those `read` finds missing, a few times; past that, or
   * when it asks for many, it waits for every text.
   */
  async withNotes<T>(read: () => T, likely: () => Iterable<string>): Promise<T> {
    if (this.graph.notesInStorage === 0 || !this.noteSource) return read()
    await this.readSomeNotes(this.graph.notesInStorageAmong(likely()))
    for (let round = 0; round < NOTE_READ_ROUNDS && this.graph.notesInStorage > 0; round++) {
      try {
        return read()
      } catch (err) {
        if (!(err instanceof NoteInStorage)) throw err
        if (err.slugs.length > Math.max(ROW_READ_MIN, this.graph.notesInStorage * ROW_READ_SHARE)) break
        await this.readSomeNotes(err.slugs)
      }
    }
    await this.notesHeld()
    return read()
  }

  private async readSomeNotes(slugs: string[]): Promise<void> {
    if (slugs.length && this.noteSource) this.graph.takeInNotes(await stored(() => this.noteSource!.some(slugs)))
  }

  /** Files up to `count` more entity names into the duplicate check; true once all are. */
  private fileNames(count: number): boolean {
    const end = Math.min(this.unnamedAt + count, this.unnamed.length)
    for (; this.unnamedAt < end; this.unnamedAt++) {
      // read now, not at open: a commit since then may have renamed or removed it (and filed it)
      const e = this.graph.entities.get(this.unnamed[this.unnamedAt]!)
      if (e) this.variants.add(e.key, e.name)
    }
    if (this.unnamedAt < this.unnamed.length) return false
    this.unnamed = []
    this.unnamedAt = 0
    this.savedNames = this.savedNamesRead = undefined
    return true
  }

  /**
   * Existing names a write's new names may be variants of. Right after an open, the names not
   * filed yet are found through the save's name blocks instead of being signed first.
   */
  private async possibleDuplicates(newNames: string[]): Promise<PossibleDuplicate[]> {
    if (!newNames.length) return []
    if (this.unnamed.length && this.savedNames) {
      // a save without its blocks (or one unreadable) leaves the names to be signed
      this.savedNamesRead ??= this.savedNames().catch(() => undefined)
      const blocks = await this.savedNamesRead
      if (blocks && this.unnamed.length) return findPossibleDuplicates(newNames, this.variants, { blocks, nameOf: (key) => this.graph.entities.get(key)?.name })
    }
    return findPossibleDuplicates(newNames, this.nameIndex())
  }

  /** The duplicate check with every entity name in it. */
  private nameIndex(): VariantIndex {
    this.fileNames(Infinity)
    return this.variants
  }

  /** The committed graph, for inspection and tests; never mutate it. */
  get committedGraph(): Graph {
    return this.graph
  }

  /** The alias rows as stored, with the time each merge was recorded. */
  storedAliases(): Promise<Alias[]> {
    this.assertOpen()
    return stored(() => this.db.aliases.toArray())
  }

  /** Saves a new name in the memory's own database; `info` shows it at once. */
  async rename(name: string): Promise<void> {
    this.assertOpen()
    await stored(() => this.db.meta.put({ key: 'info', value: { ...this.info, name } }))
    this.info.name = name
  }

  // ---- writes (queued) -------------------------------------------------------------

  write(input: unknown, createdBy: string): Promise<WriteResult> {
    return this.enqueue(() => this.writeNow(input, createdBy), 'one note')
  }

  /** A write, in the queue. */
  private async writeNow(input: unknown, createdBy: string): Promise<WriteResult> {
    {
      const valid = validateObservationInput(input, (name) => this.graph.entities.has(this.graph.resolveName(name)))
      checkEndpoints(valid.entities, valid.relationships, (k) => this.graph.resolve(k), (k) => this.graph.entities.has(k), 'write')
      checkSupersedes(undefined, valid.supersedes, (s) => this.graph.hasObservation(s), 'write')
      // the timeline reads the notes a note supersedes
      await this.readSomeNotes(this.graph.notesInStorageAmong(valid.supersedes ?? []))
      const now = this.clock()
      const slug = makeSlug(valid.title, (s) => this.graph.hasObservation(s), () => randomId(6))
      const { warnings: w, ...fields } = valid
      const observation: Observation = { slug, ...fields, observedAt: fields.observedAt ?? now, createdBy, createdAt: now, updatedAt: now }
      const warnings: WriteWarning[] = [...w, ...this.unknownFileWarnings(observation.files)]
      if (!observation.entities.length) warnings.push(NO_ENTITY_WARNING)
      const newNames = valid.entities.map((e) => e.name).filter((n) => !this.graph.entities.has(this.graph.resolveName(n)))
      const possibleDuplicates = await this.possibleDuplicates(newNames)
      await this.commitObservation(slug, observation)
      return { slug, warnings, neighborhoods: neighborhoodsOf(this.graph, observation), possibleDuplicates }
    }
  }

  update(slug: unknown, patchInput: unknown): Promise<UpdateResult> {
    return this.enqueue(async () => {
      const current = await this.requireHeldObservation(slug)
      const patch = validatePatch(patchInput)
      checkSupersedes(current.slug, patch.validity.supersedes, (s) => this.graph.hasObservation(s), 'update')
      await this.readSomeNotes(this.graph.notesInStorageAmong(patch.validity.supersedes ?? []))
      const { next, warnings } = applyPatch(current, patch, this.clock())
      checkEndpoints(next.entities, next.relationships, (k) => this.graph.resolve(k), (k) => this.entityExistsWithout(k, current.slug), 'update')
      const hints = reviewHints(current, patch, this.graph)
      if (patch.fields.files) warnings.push(...this.unknownFileWarnings(patch.fields.files))
      await this.commitObservation(current.slug, next)
      return { observation: next, warnings, reviewHints: hints, neighborhoods: neighborhoodsOf(this.graph, next) }
    }, 'one note')
  }

  delete(slug: unknown): Promise<DeleteResult> {
    return this.enqueue(async () => {
      const current = await this.requireHeldObservation(slug)
      let pruned: DeleteResult['pruned'] = { entities: [], relationships: [] }
      await this.commitObservation(current.slug, undefined, (delta) => {
        // named while the graph still holds what is about to go
        pruned = {
          entities: delta.removedEntities.map((k) => this.graph.entities.get(k)?.name ?? k),
          relationships: delta.removedRelationships.map((k) => this.graph.relationships.get(k)).filter((r) => r !== undefined).map((r) => this.graph.present(r)),
        }
      })
      return { slug: current.slug, pruned }
    }, 'one note')
  }

  storeFile(input: unknown, createdBy: string): Promise<AppendixFile> {
    return this.enqueue(async () => {
      const file = await validateFileInput(input)
      if (this.files.has(file.path)) throw new MemoryError('conflict', `an appendix file already exists at "${file.path}"; choose another path`, { path: file.path })
      const record = await this.saveFile(file, createdBy)
      this.files.set(record.path, record)
      this.emit({ files: [{ file: record, bytes: file.data }] })
      return record
    })
  }

  consolidate(): Promise<MergeProposal[]> {
    return this.enqueue(async () => {
      const rejected = new Set([...this.proposals.values()].filter((p) => p.status === 'rejected').map((p) => p.id))
      const accepted = new Set([...this.proposals.values()].filter((p) => p.status === 'accepted').map((p) => p.id))
      const found = [...proposeMerges({ entities: this.graph.entities.values(), relationships: this.graph.relationships.values(), rejected, now: this.clock() }), ...(await this.proposeSupersessions(new Set([...rejected, ...accepted])))]
        .filter((p) => !accepted.has(p.id))
      await stored(() =>
        this.db.transaction('rw', this.db.proposals, async () => {
          const stale = [...this.proposals.values()].filter((p) => p.status === 'open').map((p) => p.id)
          await this.db.proposals.bulkDelete(stale)
          await this.db.proposals.bulkPut(found)
        }),
      )
      for (const [id, p] of this.proposals) if (p.status === 'open') this.proposals.delete(id)
      for (const p of found) this.proposals.set(p.id, p)
      return found
    })
  }

  /**
   * `tier` is the accepting connection's: below `full`, only a merge the names alone justify. A
   * supersession is accepted by writing a note (as `createdBy`), which `read_write` may.
   */
  acceptProposal(id: unknown, options: unknown = {}, tier: Tier = 'full', createdBy = 'owner'): Promise<{ proposal: MergeProposal; canonical: string; delta: GraphDelta }> {
    return this.enqueue(async () => {
      const proposal = this.requireOpenProposal(id)
      if (proposal.kind === 'supersede') return this.acceptSupersession(proposal, createdBy)
      if (tier !== 'full' && !namesMayMerge(proposal.names[0], proposal.names[1])) {
        throw new MemoryError(
          'forbidden',
          `merging ${JSON.stringify(proposal.names[0])} and ${JSON.stringify(proposal.names[1])} rests on more than their names (descriptions or shared neighbors); accepting it needs a full connection`,
          { id: proposal.id, names: proposal.names, needed: 'full', held: tier },
        )
      }
      const opts = (options ?? {}) as { canonical?: unknown }
      let canonical = proposal.canonical
      if (opts.canonical !== undefined) {
        const wanted = typeof opts.canonical === 'string' ? this.graph.resolveName(opts.canonical) : ''
        if (!proposal.pair.includes(wanted)) {
          throw new MemoryError('invalid_request', `canonical must be one of the proposal's names: ${proposal.names.join(' or ')}`, { id: proposal.id, names: proposal.names })
        }
        canonical = wanted
      }
      const variant = proposal.pair[0] === canonical ? proposal.pair[1] : proposal.pair[0]
      const aliases = applyMergeToAliases(new Map(this.graph.aliasMap()), variant, canonical)
      const accepted: MergeProposal = { ...proposal, canonical, status: 'accepted' }
      const delta = await this.commitAliases(aliases, [accepted])
      this.proposals.set(accepted.id, accepted)
      return { proposal: accepted, canonical: this.graph.entities.get(canonical)?.name ?? canonical, delta }
    })
  }

  /** The relationship types this memory declares single-valued (stored form, sorted). */
  singleValuedTypes(): string[] {
    return [...(this.singleValued?.types ?? [])]
  }

  /** Declares which relationship types hold one target at a time; replaces the earlier list, and syncs. */
  setSingleValued(types: unknown): Promise<string[]> {
    return this.enqueue(async () => {
      const setting: SingleValuedSetting = { types: parseSingleValued(types), at: this.clock() }
      await stored(() => this.db.meta.put({ key: SINGLE_VALUED_META_KEY, value: setting }))
      this.singleValued = setting
      this.emit({ singleValued: setting })
      return [...setting.types]
    })
  }

  /** Supersession proposals for the single-valued types: edges and notes as they hold now. */
  private async proposeSupersessions(decided: ReadonlySet<string>): Promise<MergeProposal[]> {
    const types = new Set(this.singleValued?.types ?? [])
    if (!types.size) return []
    const timeline = await this.timelineReady()
    const now = this.clock()
    const view = new TimeView(timeline, this.graph, { history: 'current' }, now)
    return proposeSupersessions({
      relationships: this.graph.relationships.values(),
      singleValued: types,
      noteTime: (slug) => ({ start: timeline.interval(slug)?.start ?? Date.parse(this.graph.observedAtOf(slug) ?? now), current: view.valid(slug) }),
      edgeCurrent: (r) => view.edge(r),
      nameOf: (key) => this.graph.entities.get(key)?.name ?? key,
      decided,
      now,
    })
  }

  /** Accepts a supersession: writes the note that supersedes the older one (see core/supersede). */
  private async acceptSupersession(proposal: MergeProposal, createdBy: string): Promise<{ proposal: MergeProposal; canonical: string; delta: GraphDelta }> {
    const detail = proposal.supersede
    if (!detail || !this.graph.hasObservation(detail.older) || !this.graph.hasObservation(detail.newer)) {
      throw new MemoryError('conflict', `proposal "${proposal.id}" names a note that is gone; run consolidate again`, { id: proposal.id })
    }
    const written = await this.writeNow(supersessionNote({ ...proposal, supersede: detail }), createdBy)
    const accepted: MergeProposal = { ...proposal, status: 'accepted' }
    await stored(() => this.db.proposals.put(accepted))
    this.proposals.set(accepted.id, accepted)
    return { proposal: accepted, canonical: written.slug, delta: emptyDelta() }
  }

  rejectProposal(id: unknown): Promise<MergeProposal> {
    return this.enqueue(async () => {
      const rejected: MergeProposal = { ...this.requireOpenProposal(id), status: 'rejected' }
      await stored(() => this.db.proposals.put(rejected))
      this.proposals.set(rejected.id, rejected)
      this.emit({ rejected: [{ id: rejected.id, pair: rejected.pair, at: this.clock() }] })
      return rejected
    })
  }

  /**
   * Loads observations written elsewhere (a migration, an import) as one commit,
   * keeping their slugs; each must already satisfy the write contract.
   */
  importObservations(observations: Observation[], aliases: Alias[]): Promise<number> {
    return this.importSnapshot({ observations, aliases })
  }

  /**
   * Loads a memory's content written elsewhere (a backup, a migration) as one commit, written in
   * pieces (store/import-pieces):
   * observations keeping their slugs, aliases, and pairs already rejected, so consolidation does
   * not propose them again. Each observation must already satisfy the write contract.
   */
  importSnapshot(snapshot: { observations: Observation[]; aliases: Alias[]; rejected?: Array<{ id: string; pair: [string, string]; at: string }> }): Promise<number> {
    const { observations, aliases } = snapshot
    return this.enqueue(async () => {
      const fresh = observations.filter((o) => !this.graph.getObservation(o.slug))
      const next = Graph.derive([...this.graph.allObservations(), ...fresh], new Map([...this.graph.aliasMap(), ...aliases.map((a) => [a.variant, a.canonical] as const)]))
      const rejected = (snapshot.rejected ?? []).filter((r) => this.proposals.get(r.id)?.status !== 'rejected')
      const proposals = rejected.map((r) => this.rejectedProposal(r))
      const db = this.db
      const notesJournal = fresh.map((o) => this.journalRow(observationJournalKey(o.slug)))
      const aliasesJournal = aliases.length ? [this.journalRow(ALIASES_JOURNAL_KEY)] : []
      const journal = [...notesJournal, ...aliasesJournal]
      // the commit proper, after the notes and the derived rows went in pieces (store/import-pieces):
      // even a small import rewrites every derived row, which in one transaction of a large
      // memory would leave Chromium an undo log of all of them
      const commit = async () => {
        await db.meta.put({ key: VERSION_KEY, value: this.version + 1 })
        if (fresh.some(hasValidity)) await db.meta.put({ key: VALIDITY_KEY, value: true })
        await db.aliases.bulkPut(aliases)
        if (proposals.length) await db.proposals.bulkPut(proposals)
        if (aliasesJournal.length) await db.unmirrored.bulkPut(aliasesJournal)
      }
      const plan = { observations: fresh, journal: notesJournal, entities: [...next.entities.values()], relationships: [...next.relationships.values()], edgeBacking: [...next.edgeBacking()], commit, commitTables: [db.aliases, db.proposals, db.meta, db.unmirrored] }
      await stored(() => whileImporting(this.info.id, () => importInPieces(db, plan)))
      for (const p of proposals) this.proposals.set(p.id, p)
      // derived once, above: the live graph takes it over rather than applying each note again
      const removed = this.graph.replaceWith(next)
      this.version++
      const now = this.clock()
      this.emit({
        observations: { put: fresh },
        aliases: [...this.graph.aliasMap()].map(([variant, canonical]) => ({ variant, canonical, createdAt: now })),
        ...(rejected.length ? { rejected } : {}),
        journal,
      })
      // every entity may have gained backers; the index skips those whose text did not change
      await this.reindex({ ...emptyDelta(), ...removed, upsertedEntities: [...this.graph.entities.values()] }, { put: fresh, deleted: [] })
      return fresh.length
    })
  }

  /** A rejected pair as a proposal: the one already known, or a record of the rejection alone. */
  private rejectedProposal(r: { id: string; pair: [string, string]; at: string }): MergeProposal {
    const known = this.proposals.get(r.id)
    return known ? { ...known, status: 'rejected' } : { id: r.id, kind: 'merge', pair: r.pair, names: [...r.pair], canonical: r.pair[0], score: 0, evidence: [], status: 'rejected', createdAt: r.at || this.clock() }
  }

  /**
   * Applies observations and aliases that another device wrote, in one transaction, and
   * re-derives only what they touch. Nothing is re-validated against the write contract:
   * the sync layer has checked each value, and derivation tolerates dangling edges.
   */
  applyRemote(incoming: RemoteChange): Promise<GraphDelta> {
    // merges made on two devices at once can meet as chains or loops (A into B here, B into A
    // there): every device settles them the same way, flat, a loop merged into its least key
    const change: RemoteChange = incoming.aliases ? { ...incoming, aliases: collapseAliases(incoming.aliases) } : incoming
    return this.enqueue(async () => {
      await this.applyRemoteExtras(change)
      if (!change.put.length && !change.deleted.length && !change.aliases) return emptyDelta()
      const previewed = this.graph.previewChanges({ put: change.put, deleted: change.deleted, aliases: change.aliases })
      // the notes the change itself puts or removes; an alias change re-files others unchanged
      const named = new Set([...change.put.map((o) => o.slug), ...change.deleted])
      const changed = [...previewed.observations].filter(([slug]) => named.has(slug))
      const put = changed.map(([, o]) => o).filter((o): o is Observation => o !== undefined)
      const deleted = changed.filter(([, o]) => o === undefined).map(([slug]) => slug)
      if (!changed.length && !change.aliases) {
        this.graph.discardPreviewedChanges(previewed)
        return emptyDelta()
      }
      const now = this.clock()
      await this.saveOrDiscard(previewed, {
        version: this.version + 1,
        delta: previewed.delta,
        observations: { put, delete: deleted },
        ...(change.aliases ? { aliases: [...change.aliases].map(([variant, canonical]) => ({ variant, canonical, createdAt: now })) } : {}),
        settled: [...changed.map(([slug]) => observationJournalKey(slug)), ...(change.aliases ? [ALIASES_JOURNAL_KEY] : [])],
      })
      this.graph.applyPreviewedChanges(previewed)
      this.version++
      await this.reindex(previewed.delta, { put, deleted })
      return previewed.delta
    })
  }

  /** Files, rejected pairs and settings from another device: they touch no derived state. */
  private async applyRemoteExtras(change: RemoteChange): Promise<void> {
    if (change.singleValued && !sameJson(change.singleValued, this.singleValued)) {
      const setting = change.singleValued
      await stored(() => this.db.meta.put({ key: SINGLE_VALUED_META_KEY, value: setting }))
      this.singleValued = setting
    }
    const offered = (change.files ?? []).filter(({ file }) => this.files.get(file.path)?.sha256 !== file.sha256)
    // a file is stored only with the bytes its entry describes; a peer's mismatch waits for the right bytes
    const hashes = await Promise.all(offered.map(({ bytes }) => sha256Hex(bytes)))
    const files = offered.filter(({ file, bytes }, i) => bytes.byteLength === file.size && hashes[i] === file.sha256)
    const rejected = (change.rejected ?? []).filter((r) => this.proposals.get(r.id)?.status !== 'rejected')
    if (!files.length && !rejected.length) return
    const proposals = rejected.map((r) => this.rejectedProposal(r))
    const db = this.db
    await stored(() =>
      db.transaction('rw', [db.files, db.fileBytes, db.proposals], async () => {
        for (const { file, bytes } of files) {
          await db.files.put(file)
          await db.fileBytes.put({ path: file.path, data: bytes })
        }
        if (proposals.length) await db.proposals.bulkPut(proposals)
      }),
    )
    for (const { file } of files) this.files.set(file.path, file)
    for (const p of proposals) this.proposals.set(p.id, p)
  }

  /** Local commits whose document update may not be saved yet (see `JournalRow`). */
  async journalRows(): Promise<JournalRow[]> {
    return this.db.unmirrored.toArray()
  }

  /**
   * Drops journal rows whose document update is now saved, unless a later commit rewrote them;
   * a part at a time: the 100,000 rows of a large import, in one transaction, held the worker
   * for seconds issuing their requests. A row left by a part that failed is harmless: the next
   * binding lets it win again, with the same value.
   */
  async markMirrored(rows: readonly JournalRow[]): Promise<void> {
    const db = this.db
    for (let at = 0; at < rows.length; at += JOURNAL_ROWS_PER_PART) {
      const part = rows.slice(at, at + JOURNAL_ROWS_PER_PART)
      await db.transaction('rw', db.unmirrored, async () => {
        const current = await db.unmirrored.bulkGet(part.map((r) => r.key))
        const done = part.filter((r, i) => current[i]?.stamp === r.stamp).map((r) => r.key)
        if (done.length) await db.unmirrored.bulkDelete(done)
      })
    }
  }

  private journalRow(key: string): JournalRow {
    return { key, stamp: `${this.journalSession}:${++this.journalSeq}` }
  }

  /** Subscribes to local commits (never to applyRemote); returns the unsubscribe. */
  onCommitted(listener: (c: CommittedChange) => void): () => void {
    this.commitListeners.add(listener)
    return () => this.commitListeners.delete(listener)
  }

  /** Every observation and the alias map, for reconciling with a sync document (after `notesHeld`). */
  snapshotState(): { observations: Iterable<Observation>; aliases: Map<string, string> } {
    return { observations: this.graph.allObservations(), aliases: new Map(this.graph.aliasMap()) }
  }

  /** Appendix files with their bytes, and rejected pairs, for seeding a sync document. */
  async extrasState(): Promise<{ files: Array<{ file: AppendixFile; bytes: Uint8Array }>; rejected: Array<{ id: string; pair: [string, string]; at: string }>; singleValued?: SingleValuedSetting }> {
    const rows = await this.db.fileBytes.bulkGet([...this.files.keys()])
    const files = [...this.files.values()].map((file, i) => ({ file, bytes: rows[i]?.data })).filter((f): f is { file: AppendixFile; bytes: Uint8Array } => f.bytes !== undefined)
    const rejected = [...this.proposals.values()].filter((p) => p.status === 'rejected').map((p) => ({ id: p.id, pair: p.pair, at: p.createdAt }))
    return { files, rejected, ...(this.singleValued ? { singleValued: this.singleValued } : {}) }
  }

  // ---- reads (never queued; they see the last committed state) ---------------------

  /** The weights of a note's score: the eval measures others through `engineOf`; nothing else sets it. */
  recallTuning: Readonly<RecallTuning> = DEFAULT_TUNING

  async recall(request: unknown): Promise<RecallResult> {
    this.assertOpen()
    const { time, rest } = splitTimeRequest(request)
    const f = parseRecallRequest(rest)
    const within = await this.timeView(time)
    if (within) f.within = within
    return countLeftOut(await this.recallWithin(f), within)
  }

  private async recallWithin(f: RecallFilter): Promise<RecallResult> {
    if (!f.query) return this.withNotes(() => assembleStructural(this.graph, f, this.info.retrieval.snippetLength), () => [])
    this.recalling++
    try {
      // the note index first: it embeds the query with its words, the entity index then reuses the query's vector
      const noteTerms: QueryTerm[] = []
      const entityTerms: QueryTerm[] = []
      const notes = await this.notes.search(f.query, Math.max(f.limits.observations, NOTE_CANDIDATES), noteTerms)
      const hits = await this.index.search(f.query, Math.max(f.limits.entities * SEARCH_HEADROOM, 20), undefined, entityTerms)
      await this.findParaphrases(f.query, hits, entityTerms)
      const evidence = new QueryEvidence({ terms: noteTerms, size: this.notes.size() }, { terms: entityTerms, size: this.index.size() })
      const signals = this.signals()
      const assemble = () => ({ ...assembleSemantic(this.graph, hits, notes, evidence, f, this.info.retrieval.snippetLength, this.recallTuning), signals })
      if (this.graph.notesInStorage === 0) return assemble()
      // Ranked first, by what the open saved (slugs, times, backing): the texts of only the notes
      // it shows are then read, and the recall is not ranked again. A change committed during
      // the read ranks it again.
      const version = this.version
      const draft = await this.withNotes(() => draftSemantic(this.graph, hits, notes, evidence, f, this.info.retrieval.snippetLength, this.recallTuning), () => [])
      await this.readSomeNotes(this.graph.notesInStorageAmong(draft.shown))
      return this.version === version ? { ...(await this.withNotes(() => draft.complete(), () => [])), signals } : await this.withNotes(assemble, () => [])
    } finally {
      this.recalling--
      this.lastRecallAt = performance.now()
    }
  }

  /**
   * The best few entities found by vector alone may still hold the query by a close paraphrase
   * ("physician" for "doctor"): that is evidence, as the word itself is. Marks them, and the
   * query's words so held.
   */
  private async findParaphrases(query: string, hits: RankedEntity[], terms: QueryTerm[]): Promise<void> {
    if (this.index.mode !== 'hybrid') return
    const unheld = hits.filter((h) => h.terms === 0 && this.graph.entities.has(h.key)).slice(0, PARAPHRASE_CANDIDATES)
    if (!unheld.length) return
    const texts = unheld.map((h) => {
      const e = this.graph.entities.get(h.key)!
      return [e.name, e.description, ...e.queries].join('\n')
    })
    const masks = await this.notes.paraphrasesIn(query, terms, texts)
    let any = 0
    unheld.forEach((h, i) => {
      if (masks[i]) h.paraphrases = masks[i]
      any |= masks[i]!
    })
    terms.forEach((t, i) => {
      if (i < 31 && any & (1 << i)) t.paraphrased = true
    })
  }

  /** What ranks this memory's semantic recalls: words, and vectors of its frozen model in a hybrid memory. */
  private signals(): RecallSignals {
    return this.index.mode === 'hybrid' ? { words: true, vectors: true, model: this.info.retrieval.embedder } : { words: true, vectors: false }
  }

  /**
   * Every note whose own text holds a word of `text` (stemmed, as recall matches words), best
   * first, each with the words of it that match: the Notes screen's search, linked or not.
   */
  async findNotes(text: string, limit: number): Promise<Array<{ slug: string; words: string[] }>> {
    this.assertOpen()
    const hits = (await this.notes.search(text, limit)).filter((h) => h.terms !== 0)
    return hits.flatMap((h) => {
      const o = this.graph.getObservation(h.slug)
      return o ? [{ slug: h.slug, words: this.notes.matchingWords(text, `${o.title}\n${o.content}`) }] : []
    })
  }

  /** The notes backing the entity `name` names (none for a name that names none), to read them ahead. */
  notesOfName(name: unknown): readonly string[] {
    if (typeof name !== 'string' || !normalizeName(name)) return []
    return this.graph.entities.get(this.graph.resolveName(name))?.observations ?? []
  }

  getObservation(slug: unknown): Observation {
    this.assertOpen()
    return structuredClone(this.requireObservation(slug))
  }

  /** A bounded piece of the entity graph for drawing; see core/graph-slice. */
  graphSlice(opts: GraphSliceOptions = {}): GraphSlice {
    this.assertOpen()
    if (opts.center !== undefined && (typeof opts.center !== 'string' || !normalizeName(opts.center))) {
      throw new MemoryError('invalid_request', 'graphSlice center must be an entity name')
    }
    return graphSlice(this.graph, opts)
  }

  inspect(name: unknown): EntityDetail {
    this.assertOpen()
    if (typeof name !== 'string' || !normalizeName(name)) throw new MemoryError('invalid_request', 'inspect takes an entity name')
    const key = this.graph.resolveName(name)
    const entity = this.graph.entities.get(key)
    if (!entity) throw new MemoryError('not_found', `no entity named "${name}"; recall with a query to find similar names`, { name })
    const edges = this.graph.edgesOf(key)
    const aliases = [...this.graph.aliasMap()].filter(([, c]) => c === key).map(([v]) => v).sort()
    return {
      entity: structuredClone(entity),
      outgoing: edges.filter((r) => r.source === key).map((r) => this.graph.present(r)),
      incoming: edges.filter((r) => r.target === key).map((r) => this.graph.present(r)),
      observations: entity.observations.map((s) => this.graph.getObservation(s)!).map(({ slug, title, observedAt, category }) => ({ slug, title, observedAt, category })),
      aliases,
      history: historyOf(entity.observations.map((s) => this.graph.getObservation(s)!), this.timelineNow(), this.clock()),
    }
  }

  listFiles(): AppendixFile[] {
    this.assertOpen()
    return [...this.files.values()].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => ({ ...f }))
  }

  async readFile(path: unknown): Promise<{ file: AppendixFile; data: Uint8Array }> {
    this.assertOpen()
    const file = typeof path === 'string' ? this.files.get(path) : undefined
    if (!file) throw new MemoryError('not_found', `no appendix file at ${describe(path)}; listFiles shows what exists`, { path: describe(path) })
    const row = await this.db.fileBytes.get(file.path)
    if (!row) throw new MemoryError('not_found', `the bytes of "${file.path}" are missing`, { path })
    return { file: { ...file }, data: row.data }
  }

  listProposals(): MergeProposal[] {
    this.assertOpen()
    return [...this.proposals.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
  }

  async saveIndexSnapshot(): Promise<void> {
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer)
    this.snapshotTimer = undefined
    const version = this.version
    if (version === this.savedVersion) return
    await this.notesHeld()
    const [snapshot, notes] = await Promise.all([this.index.snapshot(), this.notes.snapshot()])
    // a snapshot that may miss a commit is saved without the id that lets open trust it whole
    const saveId = this.indexBehind ? undefined : randomId(12)
    const state = packOpenState(saveId ?? randomId(12), version, DERIVATION_RULES, this.graph.observationTexts(), this.graph.entities.values(), this.graph.relationships.values(), undefined, this.graph.dormantBacking(), (e) => {
      const known = this.variants.signature(e.key)
      return known?.name === e.name ? known : nameSignature(e.name)
    })
    const db = this.db
    await stored(() =>
      db.transaction('rw', db.meta, async () => {
        await db.meta.bulkPut([
          { key: INDEX_SNAPSHOT_KEY, value: packIndex(version, saveId, snapshot) },
          { key: NOTE_INDEX_SNAPSHOT_KEY, value: packIndex(version, saveId, notes) },
        ])
        // without a state of this save, an older one must not stand for it
        await db.meta.where(':id').startsWith(NOTE_TEXTS_KEY).delete()
        if (state) await db.meta.bulkPut([{ key: GRAPH_SNAPSHOT_KEY, value: state.state }, ...state.texts.map((part) => ({ key: `${NOTE_TEXTS_KEY}${part.part}`, value: part }))])
        else await db.meta.delete(GRAPH_SNAPSHOT_KEY)
        if (state?.names) await db.meta.put({ key: NAME_BLOCKS_KEY, value: state.names })
        else await db.meta.delete(NAME_BLOCKS_KEY)
      }),
    )
    this.savedVersion = version
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

  // ---- internals -------------------------------------------------------------------

  /**
   * Runs a change in the write queue, once every note is held; a change of one note ('one
   * note') reads from storage only the notes it touches instead (see `commitObservation`),
   * so a write right after an open does not wait for them all.
   */
  private enqueue<T>(task: () => Promise<T>, reads: 'every note' | 'one note' = 'every note'): Promise<T> {
    this.assertOpen()
    return this.queue.run(async () => {
      this.assertOpen()
      if (reads === 'every note') await this.notesHeld()
      return task()
    })
  }

  /** An observation by slug, read from storage if the open left it there. */
  private async requireHeldObservation(slug: unknown): Promise<Observation> {
    if (typeof slug === 'string') await this.readSomeNotes(this.graph.notesInStorageAmong([slug]))
    return this.requireObservation(slug)
  }

  private assertOpen(): void {
    if (this.closed) throw new MemoryError('invalid_request', `memory "${this.info.name}" is closed; open it again`)
  }

  private requireObservation(slug: unknown): Observation {
    if (typeof slug !== 'string' || !slug) throw new MemoryError('invalid_request', 'a slug (string) is required')
    const o = this.graph.getObservation(slug)
    if (!o) throw new MemoryError('not_found', `no observation with slug "${slug}"`, { slug })
    return o
  }

  private requireOpenProposal(id: unknown): MergeProposal {
    const p = typeof id === 'string' ? this.proposals.get(id) : undefined
    if (!p) throw new MemoryError('not_found', `no proposal ${describe(id)}; run consolidate to get current proposals`, { id: describe(id) })
    if (p.status !== 'open') throw new MemoryError('conflict', `proposal "${p.id}" was already ${p.status}`, { id: p.id, status: p.status })
    return p
  }

  /** Whether an entity would still exist if observation `slug` did not describe it. */
  private entityExistsWithout(key: string, slug: string): boolean {
    const e = this.graph.entities.get(key)
    return e !== undefined && e.observations.some((s) => s !== slug)
  }

  private unknownFileWarnings(paths: string[]): Array<{ code: 'unknown_file'; message: string }> {
    return paths.filter((p) => !this.files.has(p)).map((p) => ({ code: 'unknown_file' as const, message: `no appendix file at "${p}" yet; store it with storeFile` }))
  }

  /**
   * Computes the graph change without showing it (so concurrent reads never see it), commits it
   * in one Dexie transaction, then applies the computed change.
   */
  private async commitObservation(slug: string, next: Observation | undefined, beforeCommit?: (delta: GraphDelta) => void): Promise<GraphDelta> {
    // the preview asks for the notes it files that are still in storage, having changed nothing;
    // one that files every note needs them all
    if (!this.graph.filesByChange) await this.notesHeld()
    const delta = await this.withNotes(() => this.graph.preview(slug, next), () => [slug])
    beforeCommit?.(delta)
    const journal = [this.journalRow(observationJournalKey(slug))]
    await saveCommit(this.db, { version: this.version + 1, delta, observations: next ? { put: [next], delete: [] } : { put: [], delete: [slug] }, journal })
    this.graph.applyPreviewed(slug, next, delta)
    this.version++
    this.emit({ observations: next ? { put: [next] } : { delete: [slug] }, journal })
    await this.reindex(delta, next ? { put: [next], deleted: [] } : { put: [], deleted: [slug] })
    return delta
  }

  /** Saves a previewed batch; if the save fails, the graph drops the preview and is as it was. */
  private async saveOrDiscard(previewed: PreviewedChanges, commit: GraphCommit): Promise<void> {
    try {
      await saveCommit(this.db, commit)
    } catch (err) {
      this.graph.discardPreviewedChanges(previewed)
      throw err
    }
  }

  private async commitAliases(aliases: Map<string, string>, proposals: MergeProposal[]): Promise<GraphDelta> {
    const previewed = this.graph.previewChanges({ aliases })
    const now = this.clock()
    const rows: Alias[] = [...aliases].map(([variant, canonical]) => ({ variant, canonical, createdAt: now }))
    const journal = [this.journalRow(ALIASES_JOURNAL_KEY)]
    await this.saveOrDiscard(previewed, { version: this.version + 1, delta: previewed.delta, aliases: rows, proposals, journal })
    this.graph.applyPreviewedChanges(previewed)
    this.version++
    this.emit({ aliases: rows, journal })
    await this.reindex(previewed.delta)
    return previewed.delta
  }

  /** A file's record and bytes, hashed, in one transaction. */
  private async saveFile(file: FileInput, createdBy: string): Promise<AppendixFile> {
    const record: AppendixFile = {
      path: file.path,
      filename: file.filename,
      type: file.type,
      size: file.data.byteLength,
      description: file.description,
      createdBy,
      createdAt: this.clock(),
      sha256: await sha256Hex(file.data),
    }
    const db = this.db
    await stored(() =>
      db.transaction('rw', [db.files, db.fileBytes], async () => {
        await db.files.add(record)
        await db.fileBytes.put({ path: file.path, data: file.data })
      }),
    )
    return record
  }

  private emit(change: CommittedChange): void {
    for (const listener of this.commitListeners) listener(change)
  }

  private async reindex(delta: GraphDelta, notes?: { put: Observation[]; deleted: string[] }): Promise<void> {
    this.keepTimeline(notes)
    try {
      await this.reindexNow(delta, notes)
    } catch (err) {
      // the commit stands; the indexes miss it until an open brings them up to the graph
      this.indexBehind = true
      throw err
    }
  }

  private async reindexNow(delta: GraphDelta, notes?: { put: Observation[]; deleted: string[] }): Promise<void> {
    if (notes?.deleted.length) await this.notes.remove(notes.deleted)
    if (notes?.put.length) await this.notes.upsert(notes.put.map(noteDoc))
    for (const k of delta.removedEntities) this.variants.remove(k)
    for (const e of delta.upsertedEntities) this.variants.add(e.key, e.name)
    if (delta.removedEntities.length) await this.index.remove(delta.removedEntities)
    // degree-only changes need no re-embedding; the index skips unchanged texts
    const docs = delta.upsertedEntities.map(entityDoc)
    if (docs.length) await this.index.upsert(docs)
    this.scheduleSnapshot()
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

/** A recall's count of the notes its view of time left out, when it left any. */
function countLeftOut(result: RecallResult, within: TimeView | undefined): RecallResult {
  if (within?.leftOut) result.superseded = within.leftOut
  return result
}

function emptyDelta(): GraphDelta {
  return { upsertedEntities: [], removedEntities: [], upsertedRelationships: [], removedRelationships: [], backing: [] }
}

/** Names a caller's value in an error message without trusting it to stringify. */
function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 200)) : `(a ${value === null ? 'null' : typeof value})`
}

export type { Tier }
