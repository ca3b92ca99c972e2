// The notes an open left in storage, read back as reads and changes need them, and the filing
// of what the open left for later, in slices between recalls.
import { MemoryError } from '../core/errors'
import type { Graph } from '../core/graph'
import { NoteInStorage } from '../core/note-shelf'
import type { Observation } from '../core/types'
import type { EntityIndex } from '../search/entity-index'
import type { NoteIndex } from '../search/note-index'
import { stored } from '../store/storage-error'
import type { NameFiling } from './name-filing'
import { taskScheduler } from './next-task'

/** How long background filing waits after a recall or a change, so that a run of them goes uncut (ms). */
export const FOREGROUND_QUIET_MS = 40
/** Keys a restored index puts in its maps in one go of the background work: about a millisecond. */
const KEYS_PER_PART = 1_000
/** Reads of notes a recall makes, beyond those it reads up front, before it waits for all texts. */
const NOTE_READ_ROUNDS = 8
/**
 * Past this share of the notes in storage, reading them row by row costs more than reading all
 * the saved texts: a row read costs several times a note's share of the few large text parts.
 */
const ROW_READ_SHARE = 0.2
/** Rows read one by one whatever the share: fewer than this read faster than one text part. */
const ROW_READ_MIN = 200

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

/** Reads the notes an open left in storage, and keeps count of the recalls that reading gives way to. */
export class NoteLoader {
  /** Where notes the open left in storage come from, and the read of all of them once started. */
  private source: NoteSource | undefined
  private allNotesRead: Promise<void> | undefined
  /** Set once a read or change waits for every note: the parts left are then read back to back. */
  private notesWanted = false
  /** Recalls and changes under way: background reading and filing wait for them. */
  foreground = 0
  /**
   * When the last of them ended (performance.now()): filing waits for a pause in a run of recalls
   * or writes. It starts as the engine is made, so that an open's first recall, usually asked at
   * once, goes first.
   */
  lastForegroundAt = performance.now()

  constructor(
    private readonly graph: Graph,
    private readonly isClosed: () => boolean,
  ) {}

  /**
   * Reads the texts an open left in storage (see store/open-state) from `source`: those a recall
   * shows as it needs them, and all of them before anything else reads or changes notes.
   */
  readFrom(source: NoteSource): void {
    this.source = source
  }

  /**
   * A recall or a change begins: background reading and filing give way until a pause after it.
   * A change counts too: each of its storage requests is a task of its own, and one waiting behind
   * a filing slice at each of them made a write right after an open ten times as slow.
   */
  foregroundStarted(): void {
    this.foreground++
  }

  foregroundEnded(): void {
    this.foreground--
    this.lastForegroundAt = performance.now()
  }

  /**
   * Resolves once every note is held, reading those the open left in storage if that has not
   * begun. Every read and change but a recall waits for it; a failed read is tried again by the
   * next caller.
   */
  notesHeld(): Promise<void> {
    this.notesWanted = true
    return this.readAll()
  }

  /**
   * Reads every note the open left in storage, part after part. Until someone waits for them
   * (`notesHeld`), each part waits for a pause in recalls, so that a recall waits behind one
   * part at most.
   */
  readAll(): Promise<void> {
    if (this.graph.notesInStorage === 0) return this.allNotesRead ?? Promise.resolve()
    if (!this.source) return Promise.reject(new MemoryError('storage_failed', 'this memory was opened without a way to read its notes'))
    if (!this.allNotesRead) {
      const quiet = async () => {
        while (!this.notesWanted && !this.isClosed() && (this.foreground > 0 || performance.now() - this.lastForegroundAt < FOREGROUND_QUIET_MS)) await pause(FOREGROUND_QUIET_MS)
      }
      this.allNotesRead = readNotesInto(this.graph, this.source, quiet)
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
    if (this.graph.notesInStorage === 0 || !this.source) return read()
    await this.readSome(this.graph.notesInStorageAmong(likely()))
    for (let round = 0; round < NOTE_READ_ROUNDS && this.graph.notesInStorage > 0; round++) {
      try {
        return read()
      } catch (err) {
        if (!(err instanceof NoteInStorage)) throw err
        if (err.slugs.length > Math.max(ROW_READ_MIN, this.graph.notesInStorage * ROW_READ_SHARE)) break
        await this.readSome(err.slugs)
      }
    }
    await this.notesHeld()
    return read()
  }

  /** Reads these notes from storage (the caller names only notes still there). */
  async readSome(slugs: string[]): Promise<void> {
    if (slugs.length && this.source) this.graph.takeInNotes(await stored(() => this.source!.some(slugs)))
  }
}

/** What background filing works on. */
export interface Filing {
  graph: Graph
  index: EntityIndex
  notes: NoteIndex
  loader: NoteLoader
  names: NameFiling
  isClosed: () => boolean
  /** Told once everything the open left for later is filed. */
  filed: () => void
}

/**
 * Files what an open left for later, a few milliseconds per task, so that reads answer in
 * between: a graph read from stored rows (`Graph.fromRows`) into the indexes a change needs,
 * then the entity names into the duplicate check. A change arriving first files the rest at
 * once. The budget is time, not a count: a recall waiting behind a task of 1,000 notes waited
 * tens of milliseconds at 100,000 notes on a busy machine. Recalls and changes go first, and a
 * run of them (an agent asking one question after another, or writing one note after another)
 * is not cut into: filing waits until `quietMs` have passed without one, as its slices and the
 * garbage they leave slowed each recall of such a run by a fifth at 100,000 notes. Before filing, the indexes build their
 * maps by key, which a restore leaves for later (see `KeySlots`).
 */
export function fileInBackground(f: Filing, budgetMs = 4, slice = 50, quietMs = FOREGROUND_QUIET_MS): void {
  const { graph, loader } = f
  const step = () => {
    if (f.isClosed()) return nextTask.close()
    if (loader.foreground > 0) return later(quietMs)
    const quietFor = performance.now() - loader.lastForegroundAt
    if (quietFor < quietMs) return later(quietMs - quietFor)
    const until = performance.now() + budgetMs
    // the indexes' and the saved edges' maps by key first, a part at a time: the first change
    // after an open then finds its keys without scanning a restore's 100,000
    while (!keysMapped && performance.now() < until) keysMapped = f.index.mapKeys(KEYS_PER_PART) && f.notes.mapKeys(KEYS_PER_PART) && graph.mapKeys(KEYS_PER_PART)
    if (!keysMapped) return nextTask.run(step)
    // filing reads every note: the texts the open left in storage come in first
    if (graph.notesInStorage > 0) {
      loader.readAll().then(() => later(0), () => nextTask.close())
      return
    }
    let done = false
    while (!done && performance.now() < until) done = graph.fileSome(slice) && f.names.fileSome(slice)
    if (done) {
      f.filed()
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
