// Observations as the engine's write path makes them (the same contract check and slug rule),
// stamped ahead of time so a large store can be imported in one transaction instead of
// written one call at a time.
import { validateObservationInput } from '../../src/core/contract'
import { makeSlug } from '../../src/core/slug'
import type { Observation, ObservationInput } from '../../src/core/types'

export function stampObservations(inputs: Iterable<ObservationInput>, createdBy = 'bench'): Observation[] {
  const taken = new Set<string>()
  const out: Observation[] = []
  const now = new Date(Date.UTC(2026, 5, 1)).toISOString()
  let i = 0
  for (const input of inputs) {
    const { warnings: _w, ...fields } = validateObservationInput(input)
    const n = i++
    const slug = makeSlug(fields.title, (s) => taken.has(s), () => n.toString(36))
    taken.add(slug)
    out.push({ slug, ...fields, observedAt: fields.observedAt ?? now, createdBy, createdAt: now, updatedAt: now })
  }
  return out
}
