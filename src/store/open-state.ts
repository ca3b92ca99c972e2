// What a memory opens from when nothing changed since its last save: the observations and the
// derived graph, each as one JSON string in one meta row. IndexedDB hands back a string as one
// copy, where thousands of rows (or a value holding thousands of objects) are deserialized one
// object at a time; a string and one JSON.parse cost a fraction of that.
import type { Entity, Observation, Relationship } from '../core/types'

export const OPEN_STATE_FORMAT = 'cairn-open-state@1'

export interface SavedOpenState {
  format: typeof OPEN_STATE_FORMAT
  /** The memory's commit version the state was saved at. */
  version: number
  /** The derivation rules the graph was derived under. */
  rules: string
  /** Names this save; the index snapshots saved with it carry the same, so open can tell they match. */
  saveId: string
  /** JSON of every observation. */
  observations: string
  /** JSON of the derived entities and relationships, backing notes included. */
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
  observations?: Observation[]
  saveId?: string
  entities: Entity[]
  relationships: Relationship[]
}

/**
 * Packs the state for the next open. Undefined when it cannot be packed (a memory so large
 * that a JSON string would pass the engine's limit): open then reads the tables, as it would
 * after a crash.
 */
export function packOpenState(saveId: string, version: number, rules: string, observations: Iterable<Observation>, entities: Iterable<Entity>, relationships: Iterable<Relationship>): SavedOpenState | undefined {
  try {
    return {
      format: OPEN_STATE_FORMAT,
      version,
      rules,
      saveId,
      observations: JSON.stringify([...observations]),
      entities: JSON.stringify([...entities]),
      relationships: JSON.stringify([...relationships]),
    }
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
  const s = saved as Partial<SavedOpenState> & Partial<GraphRowsSnapshot>
  if (s.version !== version || s.rules !== rules) return undefined
  if (s.format === undefined) return Array.isArray(s.entities) && Array.isArray(s.relationships) ? { entities: s.entities, relationships: s.relationships } : undefined
  if (s.format !== OPEN_STATE_FORMAT || typeof s.saveId !== 'string' || typeof s.observations !== 'string' || typeof s.entities !== 'string' || typeof s.relationships !== 'string') return undefined
  try {
    const observations: unknown = JSON.parse(s.observations)
    const entities: unknown = JSON.parse(s.entities)
    const relationships: unknown = JSON.parse(s.relationships)
    if (!Array.isArray(observations) || !Array.isArray(entities) || !Array.isArray(relationships)) return undefined
    return { saveId: s.saveId, observations: observations as Observation[], entities: entities as Entity[], relationships: relationships as Relationship[] }
  } catch {
    // an unreadable save costs a read of the tables and a derive, never the memory
    return undefined
  }
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
const PACKED_FIELDS = ['docs', 'words']

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
