// What a memory opens from when nothing changed since its last save: the observations and the
// derived graph, in one meta row. IndexedDB hands back a string or a typed array as one copy,
// where thousands of rows (or a value holding thousands of objects) are deserialized one object
// at a time. The graph is saved as columns (see graph-columns). The observations are one string,
// not parsed at all at open: each note's JSON is cut from it and parsed when first read.
import { joinNotes, NoteShelf } from '../core/note-shelf'
import type { Entity, Observation, Relationship } from '../core/types'
import { packGraph, unpackGraph, type GraphColumns } from './graph-columns'

export const OPEN_STATE_FORMAT = 'cairn-open-state@3'
/** The form with the graph and the cuts as JSON text. Still read. */
const OPEN_STATE_FORMAT_V2 = 'cairn-open-state@2'
/** The first packed form: the observations as one JSON array, parsed whole. Still read. */
const OPEN_STATE_FORMAT_V1 = 'cairn-open-state@1'

export interface SavedOpenState {
  format: typeof OPEN_STATE_FORMAT
  /** The memory's commit version the state was saved at. */
  version: number
  /** The derivation rules the graph was derived under. */
  rules: string
  /** Names this save; the index snapshots saved with it carry the same, so open can tell they match. */
  saveId: string
  /** The JSON of every observation, one after another. */
  observations: string
  /** JSON array of each observation's slug, and where its JSON ends in `observations`. */
  slugs: string
  ends: Float64Array
  /** The derived entities and relationships, backing notes included. */
  graph: GraphColumns
}

/** The second and first forms, still read: cuts and graph as JSON text. */
interface SavedOpenStateV2 {
  format: typeof OPEN_STATE_FORMAT_V2 | typeof OPEN_STATE_FORMAT_V1
  version: number
  rules: string
  saveId: string
  observations: string
  slugs?: string
  ends?: string
  entities: string
  relationships: string
}

/** The saved graph before it was packed: objects, and the observations only in their table. */
export interface GraphRowsSnapshot {
  version: number
  rules: string
  entities: Entity[]
  relationships: Relationship[]
}

export interface OpenState {
  /** Absent when only the graph was saved: the observations are then read from their table. */
  observations?: NoteShelf
  saveId?: string
  entities: Entity[]
  relationships: Relationship[]
}

/**
 * Packs the state for the next open. Undefined when it cannot be packed (a memory so large
 * that a JSON string would pass the engine's limit): open then reads the tables, as it would
 * after a crash.
 */
export function packOpenState(saveId: string, version: number, rules: string, notes: Iterable<readonly [string, string]>, entities: Iterable<Entity>, relationships: Iterable<Relationship>): SavedOpenState | undefined {
  try {
    const { slugs, text, ends } = joinNotes(notes)
    const graph = packGraph(slugs, entities, relationships)
    if (!graph) return undefined
    return { format: OPEN_STATE_FORMAT, version, rules, saveId, observations: text, slugs: JSON.stringify(slugs), ends: Float64Array.from(ends), graph }
  } catch (err) {
    if (err instanceof RangeError) return undefined
    throw err
  }
}

/**
 * The saved state, when it was saved at `version` under `rules` and reads whole; otherwise
 * undefined, and open reads the tables and derives. A row of the older, unpacked form gives
 * the graph alone.
 */
export function unpackOpenState(saved: unknown, version: number, rules: string): OpenState | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined
  const s = saved as { format?: unknown; version?: unknown; rules?: unknown; saveId?: unknown; observations?: unknown }
  if (s.version !== version || s.rules !== rules) return undefined
  if (s.format === undefined) {
    const old = saved as Partial<GraphRowsSnapshot>
    return Array.isArray(old.entities) && Array.isArray(old.relationships) ? { entities: old.entities, relationships: old.relationships } : undefined
  }
  if (typeof s.saveId !== 'string' || typeof s.observations !== 'string') return undefined
  if (s.format !== OPEN_STATE_FORMAT) return unpackV2(saved as Partial<SavedOpenStateV2>)
  const current = saved as Partial<SavedOpenState>
  try {
    const slugs: unknown = JSON.parse(String(current.slugs))
    if (!Array.isArray(slugs) || !(current.ends instanceof Float64Array)) return undefined
    const observations = shelfOf(s.observations, slugs, current.ends)
    const graph = observations && unpackGraph(current.graph, slugs as string[])
    return graph ? { saveId: s.saveId, observations, ...graph } : undefined
  } catch {
    // an unreadable save costs a read of the tables and a derive, never the memory
    return undefined
  }
}

/** A state of the second or first form: the graph as JSON text. */
function unpackV2(s: Partial<SavedOpenStateV2>): OpenState | undefined {
  if ((s.format !== OPEN_STATE_FORMAT_V2 && s.format !== OPEN_STATE_FORMAT_V1) || typeof s.saveId !== 'string' || typeof s.observations !== 'string' || typeof s.entities !== 'string' || typeof s.relationships !== 'string') return undefined
  try {
    const observations = s.format === OPEN_STATE_FORMAT_V2 ? shelfOf(s.observations, JSON.parse(String(s.slugs)), JSON.parse(String(s.ends))) : wholeShelf(s.observations)
    const entities: unknown = JSON.parse(s.entities)
    const relationships: unknown = JSON.parse(s.relationships)
    if (!observations || !Array.isArray(entities) || !Array.isArray(relationships)) return undefined
    return { saveId: s.saveId, observations, entities: entities as Entity[], relationships: relationships as Relationship[] }
  } catch {
    // an unreadable save costs a read of the tables and a derive, never the memory
    return undefined
  }
}

/** The notes of a save, unparsed, when its slugs and ends agree with its text. */
function shelfOf(text: string, slugs: unknown, ends: unknown): NoteShelf | undefined {
  if (!Array.isArray(slugs) || !(Array.isArray(ends) || ends instanceof Float64Array) || slugs.length !== ends.length) return undefined
  let last = 0
  for (let i = 0; i < ends.length; i++) {
    const end: unknown = ends[i]
    // each note at least `{}`: a cut that is out of order or empty means the row is not what was saved
    if (typeof slugs[i] !== 'string' || typeof end !== 'number' || !Number.isInteger(end) || end < last + 2) return undefined
    last = end
  }
  if (last !== text.length) return undefined
  return NoteShelf.fromText(slugs as string[], text, ends as ArrayLike<number>)
}

/** The notes of a save of the first form, one JSON array. */
function wholeShelf(json: string): NoteShelf | undefined {
  const observations: unknown = JSON.parse(json)
  return Array.isArray(observations) ? NoteShelf.of(observations as Observation[]) : undefined
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
