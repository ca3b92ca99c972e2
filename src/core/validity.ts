// World time on notes: each note's effective validity interval and the notes that superseded it,
// derived from the set of observations alone, so that every device derives the same (docs/time.md).
import { MemoryError } from './errors'
import { own, parseDate, type Issue } from './contract'
import { normalizeType, relationshipKey } from './normalize'
import type { EntityDetail, Observation, Relationship, TimeMarks } from './types'

/** An open end: a note whose start or end its author did not bound. */
const OPEN_START = -Infinity
const OPEN_END = Infinity

/** What the timeline keeps of a note: its own dates, what it supersedes, and its dated edges. */
interface NoteTime {
  observedAt: string
  /** ms; see `declaredStart`. */
  start: number
  /** ms; its `validTo`, else open. */
  end: number
  supersedes: readonly string[]
  /** The note's relationships that carry dates of their own, as authored. */
  edges: ReadonlyArray<{ source: string; type: string; target: string; validFrom?: string; validTo?: string }>
}

/** A note's interval once supersessions are applied, half-open: valid at t when start <= t < end. */
export interface EffectiveInterval {
  /** ms, -Infinity when open. */
  start: number
  /** ms, Infinity when open. */
  end: number
  /** The notes that closed this one, sorted. */
  supersededBy: string[]
}

/** Whether a note carries any world time: only such notes (and the notes they name) need the timeline. */
export function hasValidity(o: Observation): boolean {
  return o.validFrom !== undefined || o.validTo !== undefined || (o.supersedes?.length ?? 0) > 0 || o.relationships.some((r) => r.validFrom !== undefined || r.validTo !== undefined)
}

/**
 * Where a note's facts start holding: its `validFrom`, else when it was noted. A note that says
 * only when its facts stopped, at or before it was noted ("Dana left Acme in 2020", noted in
 * 2026), has an open start rather than an empty interval.
 */
export function declaredStart(o: Pick<Observation, 'observedAt' | 'validFrom' | 'validTo'>): number {
  if (o.validFrom !== undefined) return ms(o.validFrom)
  const observed = ms(o.observedAt)
  return o.validTo !== undefined && ms(o.validTo) <= observed ? OPEN_START : observed
}

function ms(iso: string): number {
  const t = Date.parse(iso)
  return Number.isFinite(t) ? t : 0
}

function timeOf(o: Observation): NoteTime {
  return {
    observedAt: o.observedAt,
    start: declaredStart(o),
    end: o.validTo !== undefined ? ms(o.validTo) : OPEN_END,
    supersedes: (o.supersedes ?? []).filter((s) => s !== o.slug),
    edges: o.relationships.filter((r) => r.validFrom !== undefined || r.validTo !== undefined).map((r) => ({ source: r.source, type: r.type, target: r.target, ...(r.validFrom ? { validFrom: r.validFrom } : {}), ...(r.validTo ? { validTo: r.validTo } : {}) })),
  }
}

/**
 * The notes that carry world time, and those they name, kept in step with a memory's notes.
 * Each pair (B supersedes A) is judged on the two notes' own intervals, never on what other
 * supersessions made of them, so the result depends only on the set of notes, not on the
 * order they arrived in:
 * - B starts at or after A starts, and before A's own end: A ends where B starts (B supersedes A);
 * - B starts before A starts (it is the older fact), and ends after A starts: B ends where A starts;
 * - otherwise the two do not overlap and neither changes.
 * A note's end is the earliest its own `validTo` and these closings give.
 */
export class Timeline {
  private readonly notes = new Map<string, NoteTime>()
  /** slug -> the notes that name it in `supersedes` (present ones only). */
  private readonly successors = new Map<string, Set<string>>()

  /** `lookup` finds a note a new note names; it must hold every note of the memory. */
  constructor(private readonly lookup: (slug: string) => Observation | undefined) {}

  static of(observations: Iterable<Observation>, lookup: (slug: string) => Observation | undefined): Timeline {
    const t = new Timeline(lookup)
    for (const o of observations) if (hasValidity(o)) t.put(o)
    return t
  }

  /** True while no note carries world time: recall then needs no time filter at all. */
  get empty(): boolean {
    return this.notes.size === 0
  }

  /** Whether the timeline holds this note (it carries world time, or a note names it). */
  has(slug: string): boolean {
    return this.notes.has(slug)
  }

  /** Takes in a note written or changed. */
  put(o: Observation): void {
    this.unlink(o.slug)
    const time = timeOf(o)
    if (hasValidity(o) || this.successors.has(o.slug)) this.notes.set(o.slug, time)
    else this.notes.delete(o.slug)
    for (const target of time.supersedes) {
      let set = this.successors.get(target)
      if (!set) this.successors.set(target, (set = new Set()))
      set.add(o.slug)
      if (!this.notes.has(target)) {
        const named = this.lookup(target)
        // a note not here yet is taken in when it arrives (its successors are known by then)
        if (named) this.notes.set(target, timeOf(named))
      }
    }
  }

  /** Forgets a deleted note: what it superseded is current again. */
  delete(slug: string): void {
    this.unlink(slug)
    this.notes.delete(slug)
  }

  private unlink(slug: string): void {
    const before = this.notes.get(slug)
    for (const target of before?.supersedes ?? []) {
      const set = this.successors.get(target)
      if (!set) continue
      set.delete(slug)
      if (set.size) continue
      this.successors.delete(target)
      // a note kept only because it was named goes with its last successor
      const named = this.notes.has(target) ? this.lookup(target) : undefined
      if (!named || !hasValidity(named)) this.notes.delete(target)
    }
  }

  /** A note's interval after supersessions; undefined for a note the timeline does not hold, which holds from its `observedAt` on. */
  interval(slug: string): EffectiveInterval | undefined {
    const a = this.notes.get(slug)
    if (!a) return undefined
    let end = a.end
    const supersededBy: string[] = []
    for (const b of this.successors.get(slug) ?? []) {
      const later = this.notes.get(b)
      if (!later || later.start < a.start) continue
      if (later.start < a.end) {
        end = Math.min(end, later.start)
        supersededBy.push(b)
      }
    }
    for (const named of a.supersedes) {
      const older = this.notes.get(named)
      // the "new" note is the older fact: it ends where the one it names begins
      if (older && a.start < older.start && older.start < a.end) end = Math.min(end, older.start)
    }
    return { start: a.start, end, supersededBy: supersededBy.sort() }
  }

  /** The dated edges a note states, as authored (for the edge's own interval). */
  datedEdges(slug: string): NoteTime['edges'] {
    return this.notes.get(slug)?.edges ?? []
  }
}

/** Which notes a recall shows: those valid now (the default), those valid at `asOf`, or all of them, marked. */
export interface TimeRequest {
  asOf?: string
  history: 'current' | 'all'
}

const HISTORY = ['current', 'all'] as const

/**
 * Takes the time fields (`asOf`, `history`) off a recall request: the rest goes to the recall
 * request's own check. Throws `invalid_request` for a bad value.
 */
export function splitTimeRequest(raw: unknown): { time: TimeRequest; rest: unknown } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { time: { history: 'current' }, rest: raw }
  const req = raw as Record<string, unknown>
  if (!Object.hasOwn(req, 'asOf') && !Object.hasOwn(req, 'history')) return { time: { history: 'current' }, rest: raw }
  const issues: Issue[] = []
  const rest: Record<string, unknown> = { ...req }
  delete rest.asOf
  delete rest.history
  const asOf = parseDate(own(req, 'asOf'), 'asOf', issues)
  let history: TimeRequest['history'] = 'current'
  const rawHistory = own(req, 'history')
  if (rawHistory !== undefined && rawHistory !== null) {
    if (!HISTORY.includes(rawHistory as TimeRequest['history'])) issues.push({ path: 'history', message: 'must be "current" or "all"' })
    else history = rawHistory as TimeRequest['history']
  }
  if (issues.length) throw new MemoryError('invalid_request', `recall rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues })
  return { time: asOf !== undefined ? { asOf, history } : { history }, rest }
}

/** What the time view needs of the graph: when a note was noted, and a name's key after merges. */
export interface TimeGraph {
  observedAtOf(slug: string): string | undefined
  resolveName(name: string): string
}

/**
 * One recall's view of time: which notes and edges are valid at the moment asked (now, or
 * `asOf`), and the marks they carry. An edge is valid when some note stating it is, within the
 * edge's own dates; an entity when some note naming it is. It counts the notes it left out.
 */
export class TimeView {
  /** The moment asked (ms): `asOf`, else now. */
  private readonly at: number
  private readonly asOf: boolean
  private readonly all: boolean
  private readonly left = new Set<string>()

  constructor(
    private readonly timeline: Timeline,
    private readonly graph: TimeGraph,
    time: TimeRequest,
    now: string,
  ) {
    this.at = ms(time.asOf ?? now)
    this.asOf = time.asOf !== undefined
    this.all = time.history === 'all'
  }

  /** How many distinct notes this view left out. */
  get leftOut(): number {
    return this.left.size
  }

  /** Whether a note is valid at the time asked. */
  valid(slug: string): boolean {
    const i = this.timeline.interval(slug)
    if (i) return this.within(i.start, i.end)
    // a note without world time holds from when it was noted on
    if (!this.asOf) return true
    const observed = this.graph.observedAtOf(slug)
    return observed === undefined || ms(observed) <= this.at
  }

  /** Whether the recall shows the note (and counts it when it does not). */
  note(slug: string): boolean {
    if (this.all || this.valid(slug)) return true
    this.left.add(slug)
    return false
  }

  /** Whether the recall shows an edge: some note stating it is valid, within the edge's own dates. */
  edge(r: Relationship): boolean {
    return this.all || this.edgeValid(r)
  }

  private edgeValid(r: Relationship): boolean {
    for (const slug of r.observations) {
      const i = this.timeline.interval(slug)
      if (!i) {
        if (this.valid(slug)) return true
        continue
      }
      const own = this.timeline.datedEdges(slug).find((e) => relationshipKey(this.graph.resolveName(e.source), normalizeType(e.type), this.graph.resolveName(e.target)) === r.key)
      const start = own?.validFrom !== undefined ? ms(own.validFrom) : i.start
      const end = own?.validTo !== undefined ? Math.min(ms(own.validTo), i.end) : i.end
      if (this.within(start, end)) return true
    }
    return false
  }

  private within(start: number, end: number): boolean {
    // now, a fact not begun yet (a plan) is still what the memory holds; as of a date, it is not
    return this.at < end && (!this.asOf || start <= this.at)
  }

  /** A note's time marks (none for a note without world time that holds at the time asked). */
  marks(slug: string): TimeMarks {
    return marksOf(this.timeline.interval(slug), this.all && !this.valid(slug))
  }

  /** An edge's mark: only `history: 'all'` shows edges not valid at the time asked. */
  edgeMarks(r: Relationship): TimeMarks {
    return this.all && !this.edgeValid(r) ? { current: false } : {}
  }
}

/**
 * An entity's notes in world-time order: by start (a note without world time starts when it was
 * noted), then slug, each marked with its interval and whether it holds `now`. Without a timeline
 * (not built yet) the notes are ordered by when they were noted and carry no marks.
 */
export function historyOf(notes: readonly Observation[], timeline: Timeline | undefined, now: string): EntityDetail['history'] {
  const at = ms(now)
  return notes
    .map((o) => {
      const i = timeline?.interval(o.slug)
      const start = i ? i.start : ms(o.observedAt)
      const current = i ? at < i.end : true
      return { start, entry: { slug: o.slug, title: o.title, observedAt: o.observedAt, ...marksOf(i), current } }
    })
    .sort((a, b) => a.start - b.start || (a.entry.slug < b.entry.slug ? -1 : a.entry.slug > b.entry.slug ? 1 : 0))
    .map((x) => x.entry)
}

/** A set of notes a recall may show: only `has` is asked. */
export interface NoteSet {
  has(slug: string): boolean
}

/** The notes both the recall's filters (`allowed`, all when undefined) and its view of time admit. */
export function admitNotes(allowed: NoteSet | undefined, within: TimeView | undefined): NoteSet | undefined {
  if (!within) return allowed
  return { has: (slug) => (!allowed || allowed.has(slug)) && within.note(slug) }
}

/** The marks of an interval, as ISO dates. */
export function marksOf(i: EffectiveInterval | undefined, notCurrent = false): TimeMarks {
  const out: TimeMarks = {}
  if (i) {
    if (i.start !== OPEN_START) out.validFrom = new Date(i.start).toISOString()
    if (i.end !== OPEN_END) out.validTo = new Date(i.end).toISOString()
    if (i.supersededBy.length) out.supersededBy = i.supersededBy
  }
  if (notCurrent) out.current = false
  return out
}

/**
 * For a local write or update: every note named in `supersedes` must exist, and a note cannot
 * supersede itself. (A peer's note may name one not arrived yet: the timeline waits for it.)
 */
export function checkSupersedes(slug: string | undefined, supersedes: readonly string[] | null | undefined, exists: (slug: string) => boolean, what: 'write' | 'update'): void {
  const issues: Issue[] = []
  ;(supersedes ?? []).forEach((s, i) => {
    if (s === slug) issues.push({ path: `supersedes[${i}]`, message: 'names this note itself' })
    else if (!exists(s)) issues.push({ path: `supersedes[${i}]`, message: `no observation with slug "${s.slice(0, 80)}": name notes by the slug write or recall returned` })
  })
  if (issues.length) throw new MemoryError('invalid_write', `${what} rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues })
}
