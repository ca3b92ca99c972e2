// "Replaces …" offers: a note that gives a source a new target of a single-valued relationship
// type (works_at, lives_in) may say it replaces the notes that state the source's current one, so
// the write carries `supersedes` and the old fact ends where the new one starts (docs/time.md).
import { typeForm } from '../../core/contract'
import type { Observation, RelationshipInput } from '../../core/types'
import type { KeyOf } from './note-edit'

/** A note that a capture may say it replaces, and the fact of it that the new note contradicts. */
export interface Replacement {
  slug: string
  title: string
  source: string
  type: string
  /** The target the old note gives. */
  was: string
  /** The target the new note gives. */
  now: string
}

/** A current note of a source entity, with what it states. */
export type CurrentNote = Pick<Observation, 'slug' | 'title' | 'relationships'>

/** The relationships of a draft whose type the memory declares single-valued: only these can replace anything. */
export function singleValuedEdges(relationships: RelationshipInput[], singleValued: ReadonlySet<string>): RelationshipInput[] {
  return relationships.filter((r) => singleValued.has(typeForm(r.type)))
}

/**
 * Of the source's current notes (`notes`), those stating the same source and type with another
 * target that still holds at `now` (ISO); a note that also states the new target, and the note
 * being edited (`self`), replace nothing. One offer per note, in the order given.
 */
export function replacementsFor(edge: RelationshipInput, notes: CurrentNote[], keyOf: KeyOf, now: string, self?: string): Replacement[] {
  const source = keyOf(edge.source)
  const type = typeForm(edge.type)
  const target = keyOf(edge.target)
  const same = (r: Observation['relationships'][number]): boolean => keyOf(r.source) === source && typeForm(r.type) === type
  const live = (r: Observation['relationships'][number]): boolean => (!r.validTo || r.validTo > now) && (!r.validFrom || r.validFrom <= now)
  const out: Replacement[] = []
  for (const n of notes) {
    if (n.slug === self || out.some((o) => o.slug === n.slug) || n.relationships.some((r) => same(r) && keyOf(r.target) === target)) continue
    const old = n.relationships.find((r) => same(r) && keyOf(r.target) !== target && live(r))
    if (old) out.push({ slug: n.slug, title: n.title, source: edge.source, type, was: old.target, now: edge.target })
  }
  return out
}
