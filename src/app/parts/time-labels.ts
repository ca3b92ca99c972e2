// How the app words world time (docs/time.md): dates a fact held from and to, and what a
// supersession says, one way on every screen.
import type { SupersedeDetail, TimeMarks } from '../../core/types'
import { typeLabel } from './labels'

/** A date of world time: a whole UTC day as written (2024-01-15), else a local date and time. */
export function worldDate(iso: string): string {
  const d = new Date(iso)
  if (!Number.isFinite(d.getTime())) return iso
  return /T00:00(:00(\.0+)?)?(Z|[+-]00:00)$/.test(iso) || /^\d{4}-\d{2}-\d{2}$/.test(iso) ? d.toISOString().slice(0, 10) : d.toLocaleString()
}

/** A half-open interval in words: "from 2020-03-01 to 2024-01-15", "from 2020-03-01", "until 2024-01-15", or "" when open both ways. */
export function intervalLabel(marks: Pick<TimeMarks, 'validFrom' | 'validTo'>): string {
  const from = marks.validFrom ? `from ${worldDate(marks.validFrom)}` : ''
  const to = marks.validTo ? `${from ? 'to' : 'until'} ${worldDate(marks.validTo)}` : ''
  return [from, to].filter(Boolean).join(' ')
}

/** The fact each side of a supersession states, e.g. "Dana works at Beta". */
export function supersededFacts(d: SupersedeDetail): { older: string; newer: string } {
  return { older: `${d.source} ${typeLabel(d.type)} ${d.targets[0]}`, newer: `${d.source} ${typeLabel(d.type)} ${d.targets[1]}` }
}

/** What a supersession proposal says: "Dana works at Beta replaces Dana works at Acme from 2024-01-15". */
export function supersessionLabel(d: SupersedeDetail): string {
  const { older, newer } = supersededFacts(d)
  return `${newer} replaces ${older}${d.from ? ` from ${worldDate(d.from)}` : ''}`
}
