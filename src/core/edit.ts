// Edit semantics: updates merge into an observation; only explicit removal removes.
import { DEFAULT_ENTITY_TYPE, intervalProblem, type ValidPatch } from './contract'
import { MemoryError } from './errors'
import type { Graph } from './graph'
import { descriptionsDiffer, normalizeName, relationshipKey } from './normalize'
import type { AuthoredEntity, AuthoredRelationship, Observation, ReviewHint, WriteWarning } from './types'

export interface PatchOutcome {
  next: Observation
  warnings: WriteWarning[]
}

/** Applies a validated patch: field values replace, entity and edge lists union (the patch wins). */
export function applyPatch(current: Observation, patch: ValidPatch, now: string): PatchOutcome {
  const warnings: WriteWarning[] = [...patch.warnings]
  const byKey = new Map<string, AuthoredEntity>(current.entities.map((e) => [normalizeName(e.name), e]))
  for (const e of patch.entities) {
    const key = normalizeName(e.name)
    const was = byKey.get(key)
    // an entity given again without a type keeps the type this note gave it (the type rule)
    byKey.set(key, e.type === DEFAULT_ENTITY_TYPE && was?.type ? { ...e, type: was.type } : e)
  }
  const relKey = (r: Pick<AuthoredRelationship, 'source' | 'type' | 'target'>): string => relationshipKey(normalizeName(r.source), r.type, normalizeName(r.target))
  const rels = new Map<string, AuthoredRelationship>(current.relationships.map((r) => [relKey(r), r]))
  for (const r of patch.relationships) rels.set(relKey(r), r)
  for (const k of patch.removeEntities) {
    if (!byKey.delete(k)) warnings.push({ code: 'ignored_field', message: `removeEntities: "${k}" is not an entity of this observation; nothing removed` })
    // an edge cannot outlive an end this observation no longer names
    for (const [rk, r] of rels) if (normalizeName(r.source) === k || normalizeName(r.target) === k) rels.delete(rk)
  }
  for (const k of patch.removeRelationships) {
    if (!rels.delete(k)) warnings.push({ code: 'ignored_field', message: `removeRelationships: ${k.split('\u0000').join(' ')} is not a relationship of this observation; nothing removed` })
  }
  const next: Observation = {
    ...current,
    ...patch.fields,
    observedAt: patch.fields.observedAt ?? current.observedAt,
    entities: [...byKey.values()],
    relationships: [...rels.values()],
    updatedAt: now,
  }
  for (const [k, v] of Object.entries(patch.validity)) {
    if (v === null) delete (next as unknown as Record<string, unknown>)[k]
    else (next as unknown as Record<string, unknown>)[k] = v
  }
  // checked on the note as it would be: a patch may move one end past the other it left alone
  const problem = intervalProblem(next.validFrom, next.validTo)
  if (problem) throw new MemoryError('invalid_write', `update rejected: validTo ${problem}`, { issues: [{ path: 'validTo', message: problem }] })
  return { next, warnings }
}

/**
 * A materially changed description asks the caller to review that entity's edges;
 * nothing is rewritten, because an edge description may still be right.
 */
export function reviewHints(before: Observation, patch: ValidPatch, graph: Graph): ReviewHint[] {
  const hints: ReviewHint[] = []
  for (const e of patch.entities) {
    // an entity named without a description describes nothing, so its description did not change
    if (!e.description.trim()) continue
    const authoredKey = normalizeName(e.name)
    const key = graph.resolve(authoredKey)
    const previous = before.entities.find((p) => normalizeName(p.name) === authoredKey)?.description ?? graph.entities.get(key)?.description
    if (previous === undefined || !descriptionsDiffer(previous, e.description)) continue
    const relationships = graph.edgesOf(key).map((r) => graph.present(r))
    hints.push({
      entity: graph.entities.get(key)?.name ?? e.name,
      previousDescription: previous,
      description: e.description,
      relationships,
      message: relationships.length
        ? `The description of "${e.name}" changed. Check whether these ${relationships.length} relationships still read right and update them explicitly if not.`
        : `The description of "${e.name}" changed; it has no relationships to review.`,
    })
  }
  return hints
}
