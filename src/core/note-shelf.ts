// The observations of a graph by slug. An opened memory holds them as the JSON text they were
// saved as, each parsed the first time it is read: the open then parses only what its first
// recall shows, and the rest as the graph is filed after it.
import { MemoryError } from './errors'
import type { Observation } from './types'

export class NoteShelf implements Iterable<Observation> {
  private readonly held = new Map<string, Observation | string>()

  static of(observations: Iterable<Observation>): NoteShelf {
    const shelf = new NoteShelf()
    for (const o of observations) shelf.held.set(o.slug, o)
    return shelf
  }

  /** Notes saved one after another in `text` (see `joinNotes`): note i ends at `ends[i]`. */
  static fromText(slugs: readonly string[], text: string, ends: ArrayLike<number>): NoteShelf {
    const shelf = new NoteShelf()
    let start = 0
    for (let i = 0; i < slugs.length; i++) {
      shelf.held.set(slugs[i]!, text.slice(start, ends[i]))
      start = ends[i]!
    }
    return shelf
  }

  get size(): number {
    return this.held.size
  }

  has(slug: string): boolean {
    return this.held.has(slug)
  }

  get(slug: string): Observation | undefined {
    const held = this.held.get(slug)
    if (typeof held !== 'string') return held
    const o = parseNote(slug, held)
    this.held.set(slug, o)
    return o
  }

  set(slug: string, o: Observation): void {
    this.held.set(slug, o)
  }

  delete(slug: string): void {
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

  /** Each note as JSON text: a note not read since it was saved gives its saved text, unparsed. */
  *texts(): IterableIterator<[string, string]> {
    for (const [slug, held] of this.held) yield [slug, typeof held === 'string' ? held : JSON.stringify(held)]
  }
}

/** The notes as one string, each note's JSON after the other, with each one's slug and end. */
export function joinNotes(texts: Iterable<readonly [string, string]>): { slugs: string[]; text: string; ends: number[] } {
  const slugs: string[] = []
  const parts: string[] = []
  const ends: number[] = []
  let at = 0
  for (const [slug, text] of texts) {
    slugs.push(slug)
    parts.push(text)
    ends.push((at += text.length))
  }
  return { slugs, text: parts.join(''), ends }
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
