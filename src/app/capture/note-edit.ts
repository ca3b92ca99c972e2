// A note edited in place with the capture editor: what the editor starts from (the note's links
// and relationships) and the update that says only what changed, since an update merges into the
// note and a link sent again without its description would blank the one the note gave.
import { typeForm } from '../../core/contract'
import type { EntityInput, Observation, ObservationPatch, RelationshipInput } from '../../core/types'
import { typeLabel } from '../parts/labels'
import type { Kept } from './draft'

/** An entity name's key in the memory (through aliases): `NameFinder.lookup`, else its normalized form. */
export type KeyOf = (name: string) => string

type NoteGraph = Pick<Observation, 'entities' | 'relationships'>

const undirected = (a: string, b: string): string => [a, b].sort().join('\u0000')

/** Of the note's relationships, the one per pair of entities the editor shows (the first); the rest are left as they are. */
function shownRelationships(note: NoteGraph, keyOf: KeyOf): NoteGraph['relationships'] {
  const seen = new Set<string>()
  return note.relationships.filter((r) => {
    const pair = undirected(keyOf(r.source), keyOf(r.target))
    if (keyOf(r.source) === keyOf(r.target) || seen.has(pair)) return false
    seen.add(pair)
    return true
  })
}

/** The editor's start: the note's entities kept linked, its relationships offered with their types filled in. */
export function editorStart(note: NoteGraph, keyOf: KeyOf): { kept: Kept; pairTypes: Record<string, string> } {
  const shown = shownRelationships(note, keyOf)
  const pairTypes: Record<string, string> = {}
  for (const r of shown) pairTypes[`${keyOf(r.source)}\u0000${keyOf(r.target)}`] = typeLabel(r.type)
  return {
    kept: {
      entities: note.entities.map((e) => ({ key: keyOf(e.name), name: e.name, ...(e.description ? { description: e.description } : {}) })),
      pairs: shown.map((r) => [keyOf(r.source), keyOf(r.target)] as const),
    },
    pairTypes,
  }
}

/**
 * The graph part of the update from what the editor now holds (`drafted`, as `draftGraph` makes
 * it): entities and relationships the note did not have, and removals of those it no longer
 * shows. What the note already had is not sent again, so its descriptions, types and queries
 * stay; an entity whose description the person changed (`described`, by key) is sent whole with
 * the new one. A description typed away to nothing keeps the note's.
 */
export function editPatch(
  note: NoteGraph,
  drafted: { entities: EntityInput[]; relationships: RelationshipInput[] },
  keyOf: KeyOf,
  described: ReadonlyMap<string, string> = new Map(),
): Pick<ObservationPatch, 'entities' | 'relationships' | 'removeEntities' | 'removeRelationships'> {
  const had = new Set(note.entities.map((e) => keyOf(e.name)))
  const now = new Set(drafted.entities.map((e) => keyOf(e.name)))
  const redescribed = note.entities.flatMap((e): EntityInput[] => {
    const text = described.get(keyOf(e.name))?.trim()
    if (!text || text === e.description || !now.has(keyOf(e.name))) return []
    return [{ name: e.name, type: e.type, description: text, ...(e.queries.length ? { queries: e.queries } : {}) }]
  })
  const relKey = (r: { source: string; type: string; target: string }): string => `${keyOf(r.source)}\u0000${typeForm(r.type)}\u0000${keyOf(r.target)}`
  const hadRels = new Set(note.relationships.map(relKey))
  const nowRels = new Set(drafted.relationships.map(relKey))
  const entities = [...drafted.entities.filter((e) => !had.has(keyOf(e.name))), ...redescribed]
  const relationships = drafted.relationships.filter((r) => !hadRels.has(relKey(r)))
  const removeEntities = note.entities.filter((e) => !now.has(keyOf(e.name))).map((e) => e.name)
  // an edge with an end removed goes with it; one the editor does not show is left alone
  const removeRelationships = shownRelationships(note, keyOf)
    .filter((r) => now.has(keyOf(r.source)) && now.has(keyOf(r.target)) && !nowRels.has(relKey(r)))
    .map(({ source, type, target }) => ({ source, type, target }))
  return {
    ...(entities.length ? { entities } : {}),
    ...(relationships.length ? { relationships } : {}),
    ...(removeEntities.length ? { removeEntities } : {}),
    ...(removeRelationships.length ? { removeRelationships } : {}),
  }
}
