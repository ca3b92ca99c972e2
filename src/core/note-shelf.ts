// The observations of a graph by slug. An opened memory holds them as the JSON text they were
// saved as, each parsed the first time it is read: the open then parses only what its first
// recall shows, and the rest as the graph is filed after it. A large memory opens before its
// texts are read at all (they are most of what it stores): a note still in storage is known by
// its slug, and reading it throws `NoteInStorage` until the texts are taken in.
import { MemoryError } from './errors'
import type { Observation } from './types'

/** Thrown by a read of notes whose texts the open left in storage; the caller reads them, then tries again. */
export class NoteInStorage extends Error {
  readonly slugs: string[]
  constructor(slugs: string | string[]) {
    const list = typeof slugs === 'string' ? [slugs] : slugs
    super(`observation "${list[0]}"${list.length > 1 ? ` and ${list.length - 1} more are` : ' is'} not read from storage yet`)
    this.slugs = list
  }
}

export class NoteShelf implements Iterable<Observation> {
  /** A note's parsed form, or its place in the save: its text is then in a part read since (`takeInPart`), or still in storage. */
  private readonly held = new Map<string, Observation | number>()
  /** The parts of the save read so far, and by place, which part (from 1; 0: still in storage). */
  private readonly parts: Array<{ from: number; text: string; ends: ArrayLike<number> }> = []
  private partOf = new Uint32Array(0)
  /** Each saved note's observedAt in ms by place, NaN where the save could not give it (see `canonicalTime`). */
  private times: Float64Array | undefined
  /** `times` as ISO text, by place, for the notes a recall has ranked so far. */
  private isoAt: Array<string | undefined> | undefined
  /** How many notes are still in storage. */
  private away = 0

  static of(observations: Iterable<Observation>): NoteShelf {
    const shelf = new NoteShelf()
    for (const o of observations) shelf.held.set(o.slug, o)
    return shelf
  }

  /** Notes saved one after another in `text` (see `joinNotes`): note i ends at `ends[i]`. */
  static fromText(slugs: readonly string[], text: string, ends: ArrayLike<number>): NoteShelf {
    const shelf = NoteShelf.inStorage(slugs)
    shelf.takeInPart(0, slugs, text, ends)
    return shelf
  }

  /** Notes known by slug and place in a save, their texts to be taken in part by part or note by note. */
  static inStorage(slugs: readonly string[], times?: Float64Array): NoteShelf {
    const shelf = new NoteShelf()
    for (let i = 0; i < slugs.length; i++) shelf.held.set(slugs[i]!, i)
    shelf.partOf = new Uint32Array(slugs.length)
    if (times && times.length === slugs.length) shelf.times = times
    shelf.away = shelf.held.size
    return shelf
  }

  get size(): number {
    return this.held.size
  }

  /** How many notes are still in storage (0 once all are taken in). */
  get inStorageCount(): number {
    return this.away
  }

  private stored(held: Observation | number | undefined): held is number {
    return typeof held === 'number' && this.partOf[held] === 0
  }

  /** Those of `slugs` that are still in storage. */
  inStorageAmong(slugs: Iterable<string>): string[] {
    const out: string[] = []
    if (this.away === 0) return out
    for (const slug of slugs) if (this.stored(this.held.get(slug))) out.push(slug)
    return out
  }

  /** Those of `slugs` still in storage whose time the save did not give (see `observedAt`). */
  untimedAmong(slugs: Iterable<string>): string[] {
    const out: string[] = []
    if (this.away === 0) return out
    for (const slug of slugs) {
      const held = this.held.get(slug)
      if (this.stored(held) && Number.isNaN(this.savedTime(held))) out.push(slug)
    }
    return out
  }

  /** The place in the save of a note not read or changed since the open (its text may be in); undefined for any other. */
  savedPlace(slug: string): number | undefined {
    const held = this.held.get(slug)
    return typeof held === 'number' ? held : undefined
  }

  /** Takes in a note read from its row; a note changed or removed since the open, or whose part is in, keeps what it has. */
  takeIn(slug: string, o: Observation): void {
    if (!this.stored(this.held.get(slug))) return
    this.held.set(slug, o)
    this.away--
  }

  /** Takes in a part of the save: the notes `slugs`, from place `from`, one after another in `text` (see `joinNotes`). */
  takeInPart(from: number, slugs: readonly string[], text: string, ends: ArrayLike<number>): void {
    if (from + slugs.length > this.partOf.length) throw new RangeError('a part beyond the save')
    this.parts.push({ from, text, ends })
    const part = this.parts.length
    for (let i = 0; i < slugs.length; i++) {
      const place = from + i
      if (this.partOf[place] !== 0) continue
      if (this.held.get(slugs[i]!) === place) this.away--
      this.partOf[place] = part
    }
  }

  /** The saved JSON of the note at `place`, from the part read that holds it. */
  private savedText(place: number): string {
    const { from, text, ends } = this.parts[this.partOf[place]! - 1]!
    const i = place - from
    return text.slice(i ? ends[i - 1] : 0, ends[i])
  }

  has(slug: string): boolean {
    return this.held.has(slug)
  }

  get(slug: string): Observation | undefined {
    const held = this.held.get(slug)
    if (held === undefined || typeof held === 'object') return held
    if (this.stored(held)) throw new NoteInStorage(slug)
    const o = parseNote(slug, this.savedText(held))
    this.held.set(slug, o)
    return o
  }

  /**
   * When a note was observed, without its text where the save gave its time: a recall ranks
   * a hub's notes by time and reads the texts of only those it shows.
   */
  observedAt(slug: string): string | undefined {
    const held = this.held.get(slug)
    if (held === undefined) return undefined
    if (typeof held === 'object') return held.observedAt
    const ms = this.savedTime(held)
    if (Number.isNaN(ms)) return this.get(slug)!.observedAt
    // formatting a time costs more than ranking the note: a hub's thousands are formatted once
    const known = this.isoAt?.[held]
    if (known !== undefined) return known
    const iso = new Date(ms).toISOString()
    ;(this.isoAt ??= new Array<string | undefined>(this.partOf.length))[held] = iso
    return iso
  }

  /** `observedAt` in ms (0 when it reads as no time), without formatting a time the save gave. */
  observedMs(slug: string): number {
    const held = this.held.get(slug)
    if (held !== undefined && typeof held !== 'object') {
      const ms = this.savedTime(held)
      if (!Number.isNaN(ms)) return ms
    }
    return Date.parse(this.observedAt(slug) ?? '') || 0
  }

  /** The time the save gave the note at `place`, in ms; NaN when it gave none. */
  private savedTime(place: number): number {
    return this.times ? this.times[place]! : NaN
  }

  set(slug: string, o: Observation): void {
    if (this.stored(this.held.get(slug))) this.away--
    this.held.set(slug, o)
  }

  delete(slug: string): void {
    if (this.stored(this.held.get(slug))) this.away--
    this.held.delete(slug)
  }

  keys(): IterableIterator<string> {
    return this.held.keys()
  }

  *values(): IterableIterator<Observation> {
    for (const slug of this.held.keys()) yield this.get(slug)!
  }

  [Symbol.iterator](): IterableIterator<Observation> {
    return this.values()
  }

  /**
   * Each note as JSON text, with its time (see `canonicalTime`): a note not read since it was
   * saved gives its saved text, unparsed, and its saved time.
   */
  *texts(): IterableIterator<[string, string, number]> {
    for (const [slug, held] of this.held) {
      if (this.stored(held)) throw new NoteInStorage(slug)
      if (typeof held === 'object') {
        yield [slug, JSON.stringify(held), canonicalTime(held.observedAt)]
        continue
      }
      const ms = this.times?.[held]
      // a save without times (an older form) gives them once, from the texts
      yield [slug, this.savedText(held), ms !== undefined ? ms : canonicalTime(this.get(slug)!.observedAt)]
    }
  }
}

/**
 * A note's observedAt as ms, when the ISO text it was written as is what those ms give back
 * (the contract writes every time so); otherwise NaN, and the time is read from the note's text.
 */
export function canonicalTime(observedAt: string): number {
  const ms = Date.parse(observedAt)
  return Number.isFinite(ms) && new Date(ms).toISOString() === observedAt ? ms : NaN
}

/** The notes as one string, each note's JSON after the other, with each one's slug, end and time (NaN when not given). */
export function joinNotes(texts: Iterable<readonly [string, string, number?]>): { slugs: string[]; text: string; ends: number[]; times: Float64Array } {
  const slugs: string[] = []
  const parts: string[] = []
  const ends: number[] = []
  const times: number[] = []
  let at = 0
  for (const [slug, text, ms] of texts) {
    slugs.push(slug)
    parts.push(text)
    ends.push((at += text.length))
    times.push(ms ?? NaN)
  }
  return { slugs, text: parts.join(''), ends, times: Float64Array.from(times) }
}

function parseNote(slug: string, text: string): Observation {
  let o: unknown
  try {
    o = JSON.parse(text)
  } catch {
    o = undefined
  }
  // written with the rest of the saved state in one transaction: only damaged storage gets here
  if (typeof o !== 'object' || o === null || (o as Observation).slug !== slug) {
    throw new MemoryError('storage_failed', `the saved copy of observation "${slug}" could not be read: the memory's stored state is damaged`, { slug })
  }
  return o as Observation
}
