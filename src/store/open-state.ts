// What a memory opens from when nothing changed since its last save: the derived graph in one
// meta row, and the observations' texts in a few more. IndexedDB hands back a string or a typed
// array as one copy, where thousands of rows (or a value holding thousands of objects) are
// deserialized one object at a time. The graph is saved as columns (see graph-columns). The
// texts are most of what a memory stores, so reading them would be most of an open: open
// reads only the graph row, so a memory answers its first recall before the
// texts are in (a recall reads the few notes it shows from their rows). The texts are read
// after the open in parts of a few MB, so that a recall never waits long behind one.
import { joinNotes, NoteShelf } from '../core/note-shelf'
import { allSteps, type Steps } from '../core/steps'
import type { DormantBacking } from '../core/graph'
import { SavedNameBlocks, type NameSignature } from '../core/variants'
import type { Entity, Relationship } from '../core/types'
import type { SavedEdges } from '../core/saved-edges'
import { packGraph, unpackGraph, type GraphColumns, type SavedNoteEntities } from './graph-columns'

/** The one form read: a state of any other is a cache miss, and open derives from the rows. */
export const OPEN_STATE_FORMAT = 'cairn-open-state@4'

export interface SavedOpenState {
  format: typeof OPEN_STATE_FORMAT
  /** The memory's commit version the state was saved at. */
  version: number
  /** The derivation rules the graph was derived under. */
  rules: string
  /** Names this save; the index snapshots and the texts saved with it carry the same, so open can tell they match. */
  saveId: string
  /** JSON array of each observation's slug, in the order of the texts' parts (`SavedNoteTexts`). */
  slugs: string
  /** The derived entities and relationships, backing notes included. */
  graph: GraphColumns
  /** Each note's observedAt in ms, by the order of `slugs`; NaN where the note's own text must say it. Absent in older saves of this form. */
  times?: Float64Array
}

/** Characters of note JSON in one part of the texts: parts are read between recalls, so a part this size keeps a recall's wait short while the parts stay few. */
export const NOTE_TEXT_PART_CHARS = 8_000_000

/** One part of the observations' texts of a save, in a row of its own. */
export interface SavedNoteTexts {
  saveId: string
  /** Which part this is (from 0), of how many. */
  part: number
  parts: number
  /** The place in the state's slugs of the part's first note. */
  from: number
  /** The JSON of the part's observations, one after another, in the order of the state's slugs. */
  text: string
  /** Where each of them ends in `text`. */
  ends: Float64Array
}

/**
 * The entity names' blocks for finding variants (`SavedNameBlocks`), by the entities' order in
 * the graph row of the same save: in a row of their own, since only a write with a new name
 * before the names are filed after an open reads them (2.4 MB at 100,000 entities).
 */
export interface SavedNameRow {
  saveId: string
  blocks: Float64Array
}

/** The name blocks of save `saveId`, for its entities `keys` in save order; undefined when the row is of another save or does not fit. */
export function unpackNameBlocks(row: unknown, saveId: string, keys: readonly string[]): SavedNameBlocks | undefined {
  if (typeof row !== 'object' || row === null) return undefined
  const r = row as Partial<SavedNameRow>
  return r.saveId === saveId ? SavedNameBlocks.of(r.blocks, keys) : undefined
}

export interface OpenState {
  /** The notes, known by slug only: their texts are in the save's texts rows. */
  observations: NoteShelf
  /** The notes' order in the save's texts (see `unpackNoteTexts`). */
  slugs: string[]
  /** Then also which entities each of them backs, by that order. */
  noteEntities?: SavedNoteEntities
  /** And the keys that were not live, with their notes. */
  dormant?: DormantBacking
  saveId: string
  entities: Entity[]
  /** A save's columns keep their edges as columns (see core/saved-edges). */
  relationships: Relationship[] | SavedEdges
}

/**
 * Packs the state for the next open. Undefined when it cannot be packed (a memory so large
 * that a JSON string would pass the engine's limit): open then reads the tables, as it would
 * after a crash.
 */
export function packOpenState(saveId: string, version: number, rules: string, notes: Iterable<readonly [string, string, number?]>, entities: Iterable<Entity>, relationships: Iterable<Relationship>, partChars = NOTE_TEXT_PART_CHARS, dormant?: DormantBacking, signatureOf?: (e: Entity) => NameSignature): PackedOpenState | undefined {
  return allSteps(packOpenStateInSteps(saveId, version, rules, notes, entities, relationships, partChars, dormant, signatureOf))
}

export interface PackedOpenState {
  state: SavedOpenState
  texts: SavedNoteTexts[]
  names?: SavedNameRow
}

/** `packOpenState` in steps (see core/steps): the notes joined, then the graph packed, then the rest; at 100,000 notes, at once, it held the worker for a few hundred ms. */
export function* packOpenStateInSteps(saveId: string, version: number, rules: string, notes: Iterable<readonly [string, string, number?]>, entities: Iterable<Entity>, relationships: Iterable<Relationship>, partChars = NOTE_TEXT_PART_CHARS, dormant?: DormantBacking, signatureOf?: (e: Entity) => NameSignature): Steps<PackedOpenState | undefined> {
  try {
    const { slugs, text, ends, times } = joinNotes(notes)
    yield
    // one order for the graph's entities and their name blocks
    const es = [...entities]
    const graph = packGraph(slugs, es, relationships, dormant)
    if (!graph) return undefined
    yield
    // parts end at note ends, each once it holds `partChars`; an empty memory has one, empty
    const cuts: number[] = []
    for (let i = 0, start = 0; i < ends.length; i++) {
      if (ends[i]! - start >= partChars || i === ends.length - 1) {
        cuts.push(i + 1)
        start = ends[i]!
      }
    }
    if (!cuts.length) cuts.push(0)
    const texts = cuts.map((to, part): SavedNoteTexts => {
      const from = part ? cuts[part - 1]! : 0
      const at = from ? ends[from - 1]! : 0
      return { saveId, part, parts: cuts.length, from, text: text.slice(at, to ? ends[to - 1]! : 0), ends: Float64Array.from(ends.slice(from, to), (end) => end - at) }
    })
    yield
    const blocks = signatureOf && SavedNameBlocks.pack(es, signatureOf)
    return { state: { format: OPEN_STATE_FORMAT, version, rules, saveId, slugs: JSON.stringify(slugs), graph, times }, texts, ...(blocks ? { names: { saveId, blocks } } : {}) }
  } catch (err) {
    if (err instanceof RangeError) return undefined
    throw err
  }
}

/**
 * The saved state, when it was saved in this form at `version` under `rules` and reads whole;
 * otherwise undefined, and open reads the tables and derives (the next save writes this form).
 * The state gives its notes by slug, in storage.
 */
export function unpackOpenState(saved: unknown, version: number, rules: string): OpenState | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined
  const s = saved as { format?: unknown; version?: unknown; rules?: unknown; saveId?: unknown }
  if (s.format !== OPEN_STATE_FORMAT || s.version !== version || s.rules !== rules || typeof s.saveId !== 'string') return undefined
  const current = saved as Partial<SavedOpenState>
  try {
    const slugs: unknown = JSON.parse(String(current.slugs))
    if (!Array.isArray(slugs) || !slugs.every((slug) => typeof slug === 'string')) return undefined
    const graph = unpackGraph(current.graph, slugs as string[])
    // times of another length are not of these notes: the texts then say them
    const times = current.times instanceof Float64Array && current.times.length === slugs.length ? current.times : undefined
    return graph ? { saveId: s.saveId, observations: NoteShelf.inStorage(slugs as string[], times), slugs: slugs as string[], ...graph } : undefined
  } catch {
    // an unreadable save costs a read of the tables and a derive, never the memory
    return undefined
  }
}

/**
 * Part `part` of the texts of the save `saveId`, with the slugs of its notes, when the row is
 * that part of that save and reads whole; otherwise undefined, and the texts left are read from
 * the observation rows.
 */
export function unpackNoteTexts(saved: unknown, saveId: string, slugs: readonly string[], part: number): { parts: number; from: number; slugs: string[]; text: string; ends: Float64Array } | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined
  const t = saved as Partial<SavedNoteTexts>
  if (t.saveId !== saveId || t.part !== part || typeof t.parts !== 'number' || typeof t.from !== 'number' || typeof t.text !== 'string' || !(t.ends instanceof Float64Array)) return undefined
  if (!Number.isInteger(t.from) || t.from < 0 || t.from + t.ends.length > slugs.length) return undefined
  const own = slugs.slice(t.from, t.from + t.ends.length)
  return cutsAgree(t.text, own, t.ends) ? { parts: t.parts, from: t.from, slugs: own, text: t.text, ends: t.ends } : undefined
}

/** Whether `ends` cut `text` into one note per slug. */
function cutsAgree(text: string, slugs: readonly unknown[], ends: ArrayLike<unknown>): boolean {
  if (slugs.length !== ends.length) return false
  let last = 0
  for (let i = 0; i < ends.length; i++) {
    const end: unknown = ends[i]
    // each note at least `{}`: a cut that is out of order or empty means the row is not what was saved
    if (typeof slugs[i] !== 'string' || typeof end !== 'number' || !Number.isInteger(end) || end < last + 2) return false
    last = end
  }
  return last === text.length
}

/**
 * A saved index snapshot. `saveId` ties it to the open state saved in the same write; `packed`
 * holds the snapshot's arrays of objects and strings as JSON (left out of `snapshot`), for the
 * reason above. A row without `packed` (saved before) is read as it is.
 */
export interface SavedIndex {
  version: number
  saveId?: string
  snapshot: unknown
  packed?: Record<string, string>
}

/** Arrays of the snapshots that hold thousands of small objects or strings. */
const PACKED_FIELDS = ['docs', 'words', 'slugs', 'keys']

export function packIndex(version: number, saveId: string | undefined, snapshot: object): SavedIndex {
  const rest: Record<string, unknown> = { ...snapshot }
  const packed: Record<string, string> = {}
  for (const field of PACKED_FIELDS) {
    if (!Array.isArray(rest[field])) continue
    try {
      packed[field] = JSON.stringify(rest[field])
      delete rest[field]
    } catch (err) {
      // too large for one string: saved as it is
      if (!(err instanceof RangeError)) throw err
    }
  }
  return { version, ...(saveId ? { saveId } : {}), snapshot: rest, packed }
}

/** The snapshot as the index restores it; an unreadable packed field fails the restore, which then rebuilds. */
export function unpackIndex(saved: SavedIndex): unknown {
  const packed = saved.packed
  if (!packed || typeof packed !== 'object' || typeof saved.snapshot !== 'object' || saved.snapshot === null) return saved.snapshot
  const snapshot: Record<string, unknown> = { ...(saved.snapshot as Record<string, unknown>) }
  for (const [field, json] of Object.entries(packed)) snapshot[field] = typeof json === 'string' ? JSON.parse(json) : undefined
  return snapshot
}
