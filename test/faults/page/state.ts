// What the fault worker reports about a memory as stored, and a key-order-free JSON for comparing rows.
import type { Observation } from '../../../src/core/types'

export interface StoredState {
  observations: Observation[]
  /** Entity and relationship rows as stored, canonical JSON. */
  rows: string
  /** The same, derived from scratch from the stored observations and aliases. */
  derived: string
  entityKeys: string[]
  relationshipKeys: string[]
  files: Array<{ path: string; size: number }>
  fileBytes: Array<{ path: string; size: number }>
  /** The observations of the sync document as saved locally. */
  docObservations: Observation[]
  docInvalid: number
}

/** JSON with object keys sorted, so rows compare by content, not by property order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}
