// Single-valued relationship types and the supersessions they suggest: when a source holds two
// current edges of such a type (Dana works_at Acme, Dana works_at Beta), consolidation proposes
// that the note of the later one supersede the note of the earlier. Never applied by itself.
import { MemoryError } from './errors'
import { storedText, TEXT, type Issue } from './contract'
import { LIMITS } from './limits'
import type { MergeProposal, ObservationInput, Relationship } from './types'

/**
 * A declaration of single-valued types as stored: distinct relationship types in the form a
 * write stores them, sorted. Throws `invalid_request` naming every bad one.
 */
export function parseSingleValued(types: unknown): string[] {
  const issues: Issue[] = []
  if (!Array.isArray(types)) throw new MemoryError('invalid_request', 'single-valued types are a list of relationship types, e.g. ["works_at", "lives_in"]')
  if (types.length > LIMITS.singleValuedTypes) issues.push({ path: 'types', message: `has ${types.length} types; the limit is ${LIMITS.singleValuedTypes}` })
  const out = new Set<string>()
  types.forEach((t, i) => {
    if (typeof t !== 'string') return void issues.push({ path: `types[${i}]`, message: 'must be a string' })
    const { value, problems } = storedText(TEXT.relationshipType, t.trim())
    for (const message of problems) issues.push({ path: `types[${i}]`, message })
    if (!problems.length) out.add(value)
  })
  if (issues.length) throw new MemoryError('invalid_request', `single-valued types rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues })
  return [...out].sort()
}

/** The proposal id of a supersession: the same on every device, never a merge's (those hold no '>'). */
export function supersedeId(older: string, newer: string): string {
  return `supersede:${older}>${newer}`
}

export interface ProposeSupersessionsInput {
  relationships: Iterable<Relationship>
  /** The memory's single-valued types (stored form). */
  singleValued: ReadonlySet<string>
  /** A note's start (ms, -Infinity when open) and whether it holds now. */
  noteTime(slug: string): { start: number; current: boolean }
  /** Whether an edge holds now (see core/validity `TimeView`). */
  edgeCurrent(r: Relationship): boolean
  /** An entity's display name by key. */
  nameOf(key: string): string
  /** Proposal ids already rejected or accepted: never proposed again. */
  decided: ReadonlySet<string>
  now: string
}

/**
 * One proposal for each two current edges of a single-valued type from one source, in the
 * order their notes start: the later note supersedes the earlier. An edge stands for the latest
 * current note stating it; a note stating both edges asks for nothing. Sorted by id.
 */
export function proposeSupersessions(input: ProposeSupersessionsInput): MergeProposal[] {
  const groups = new Map<string, Array<{ r: Relationship; note: string; start: number }>>()
  for (const r of input.relationships) {
    if (!input.singleValued.has(r.type) || !input.edgeCurrent(r)) continue
    let best: { note: string; start: number } | undefined
    for (const slug of r.observations) {
      const t = input.noteTime(slug)
      if (!t.current) continue
      if (!best || t.start > best.start || (t.start === best.start && slug > best.note)) best = { note: slug, start: t.start }
    }
    if (!best) continue
    const key = `${r.source}\u0000${r.type}`
    const list = groups.get(key)
    if (list) list.push({ r, ...best })
    else groups.set(key, [{ r, ...best }])
  }
  const out: MergeProposal[] = []
  for (const list of groups.values()) {
    if (list.length < 2) continue
    list.sort((a, b) => a.start - b.start || (a.note < b.note ? -1 : a.note > b.note ? 1 : 0) || (a.r.target < b.r.target ? -1 : 1))
    for (let i = 0; i + 1 < list.length; i++) {
      const older = list[i]!
      const newer = list[i + 1]!
      if (older.note === newer.note) continue
      const id = supersedeId(older.note, newer.note)
      if (input.decided.has(id)) continue
      const source = input.nameOf(older.r.source)
      const targets: [string, string] = [input.nameOf(older.r.target), input.nameOf(newer.r.target)]
      const from = Number.isFinite(newer.start) ? new Date(newer.start).toISOString() : undefined
      out.push({
        id,
        kind: 'supersede',
        pair: [older.note, newer.note],
        names: [`${source} ${older.r.type} ${targets[0]}`, `${source} ${newer.r.type} ${targets[1]}`],
        canonical: newer.note,
        score: 1,
        evidence: [{ signal: 'single_valued', detail: `"${older.r.type}" holds one target at a time: ${source} has ${targets[0]} (note ${older.note}) and ${targets[1]} (note ${newer.note}), which starts later`, weight: 1 }],
        status: 'open',
        createdAt: input.now,
        supersede: { older: older.note, newer: newer.note, source, type: older.r.type, targets, ...(from ? { from } : {}) },
      })
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1))
}

/**
 * The note (as a write's input) that accepting a supersession writes: it names the source entity and supersedes the
 * older note from where the newer starts, so the older note's facts end there. It is a note of
 * its own (additive, as a read_write connection may write), and deleting it undoes the decision.
 */
export function supersessionNote(p: MergeProposal & { supersede: NonNullable<MergeProposal['supersede']> }): ObservationInput {
  const d = p.supersede
  return {
    title: `${d.source}: ${d.type} ${d.targets[1]} replaces ${d.targets[0]}`.slice(0, LIMITS.titleChars).trim(),
    content: `${p.names[1]} (note ${d.newer}) replaces ${p.names[0]} (note ${d.older})${d.from ? ` from ${d.from.slice(0, 10)}` : ''}: "${d.type}" holds one target at a time.`,
    category: 'supersession',
    source: `proposal ${p.id}`.slice(0, LIMITS.sourceChars),
    entities: [{ name: d.source }],
    ...(d.from ? { validFrom: d.from } : {}),
    supersedes: [d.older],
  }
}
