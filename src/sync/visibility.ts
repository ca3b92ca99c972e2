// Who may see a memory beyond its own connections, as it travels in the sync document: the
// `visibility` map holds one entry, `memory`, with the visibility, the organization and the
// memory's name (what a member sees when it lists the organization's memories). No entry
// means private. Only a `full` connection (the owner) may write it; the sync server reads it
// to decide whether an organization member may open the room, and every device adopts it.
import * as Y from 'yjs'
import { isLabel, visibilityProblem } from '../core/identifiers'
import { LABEL_CHARS } from '../core/limits'
import type { Visibility } from '../core/types'
import { ROOTS } from './layout'
import type { Checked } from './validate'

export const VISIBILITY_KEY = 'memory'

export interface SharedVisibility {
  visibility: Visibility
  /** The organization that may read the memory; null when private. */
  orgId: string | null
  name: string
}

export function checkVisibility(key: string, value: unknown): Checked<SharedVisibility> {
  const no = (reason: string): Checked<SharedVisibility> => ({ ok: false, reason })
  if (key !== VISIBILITY_KEY) return no(`the visibility map holds only "${VISIBILITY_KEY}"`)
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array || value instanceof Y.AbstractType) return no('a visibility must be an object')
  const o = value as Record<string, unknown>
  for (const k of Object.keys(o)) if (k !== 'visibility' && k !== 'orgId' && k !== 'name') return no(`a visibility has an unknown field "${k.slice(0, 40)}"`)
  const { visibility, orgId, name } = o
  if (!isLabel(name)) return no(`a visibility names the memory (1 to ${LABEL_CHARS} characters)`)
  const problem = visibilityProblem(visibility, orgId)
  if (problem !== null) return no(problem)
  if (visibility === 'private') {
    // the stored form: a write leaves null, so anything else came from no device
    if (orgId !== null) return no('a private memory has no orgId')
    return { ok: true, value: { visibility, orgId: null, name } }
  }
  return { ok: true, value: { visibility: 'organization', orgId: orgId as string, name } }
}

export function visibilityMap(doc: Y.Doc): Y.Map<unknown> {
  return doc.getMap(ROOTS.visibility)
}

/** The document's visibility, or null when it holds none (or an invalid one): then the memory is private. */
export function readVisibility(doc: Y.Doc): SharedVisibility | null {
  const r = checkVisibility(VISIBILITY_KEY, visibilityMap(doc).get(VISIBILITY_KEY))
  return r.ok ? r.value : null
}

/** Whether a member of `orgId` may read a memory of this visibility. */
export function visibleTo(v: SharedVisibility | null, orgId: string): boolean {
  return v !== null && v.visibility === 'organization' && v.orgId === orgId
}

/** Writes the visibility when it differs from the document's; returns whether it wrote. */
export function writeVisibility(doc: Y.Doc, v: SharedVisibility, origin: unknown = null): boolean {
  const r = checkVisibility(VISIBILITY_KEY, v)
  if (!r.ok) return false
  const current = readVisibility(doc)
  if (current && current.visibility === r.value.visibility && current.orgId === r.value.orgId && current.name === r.value.name) return false
  doc.transact(() => visibilityMap(doc).set(VISIBILITY_KEY, r.value), origin)
  return true
}
