// Recall assembly: from ranked entities (semantic) or filtered observations (structural) to
// one bounded payload of entities, the edges among them and a snippet per source observation.
import { MemoryError } from './errors'
import { CURSOR_CHARS, RECALL_TEXT_CHARS } from './limits'
import { own, parseDate, type Issue } from './contract'
import type { Graph } from './graph'
import { normalizeName } from './normalize'
import { STRONG_COVERAGE, type MatchLevel, type QueryEvidence } from './evidence'
import { admitNotes, type NoteSet, type TimeView } from './validity'
import { activationPerNote, anchorsOf, DAY_MS, replyLift, sessionLift, spreadActivation, timeAnchorLift, type ContextCandidate, type Link } from './note-context'
import { lastPeriod, questionTime, type QuestionTime } from './question-time'
import type { Observation, RecallLimits, RecallRequest, RecallResult, RecalledEntity, RecalledRelationship, Snippet } from './types'

export const DEFAULT_LIMITS: RecallLimits = { entities: 12, relationships: 40, observations: 12, bytes: 24_000 }
export const MAX_LIMITS: RecallLimits = { entities: 100, relationships: 400, observations: 100, bytes: 256_000 }
/** Neighbors one seed may pull in, and how much of the seed's score they inherit. */
const EXPANSION_PER_SEED = 3
const EXPANSION_DECAY = 0.5

export interface RecallFilter {
  query?: string
  category?: string
  tags: string[]
  from?: string
  to?: string
  entity?: string
  limits: RecallLimits
  /** Structural recall continues after this observation (newest-first order). */
  cursor?: { observedAt: string; slug: string }
  /** World time: which notes and edges hold at the time asked, and their marks (core/validity). */
  within?: TimeView
}

const REQUEST_FIELDS = new Set(['query', 'category', 'tags', 'from', 'to', 'entity', 'limits', 'cursor'])

/** Validates a recall request; limits above the ceilings are clamped to them. */
export function parseRecallRequest(raw: unknown): RecallFilter {
  const issues: Issue[] = []
  const req = (raw ?? {}) as Record<string, unknown>
  if (typeof req !== 'object' || Array.isArray(req)) throw new MemoryError('invalid_request', 'recall takes an object { query?, category?, tags?, from?, to?, entity?, limits?, cursor? }')
  for (const k of Object.keys(req)) if (!REQUEST_FIELDS.has(k)) issues.push({ path: k, message: `unknown field; allowed: ${[...REQUEST_FIELDS].join(', ')}` })
  const str = (k: string): string | undefined => {
    const v = own(req, k)
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string') return void issues.push({ path: k, message: 'must be a string' })
    if (v.length > RECALL_TEXT_CHARS) return void issues.push({ path: k, message: `is longer than ${RECALL_TEXT_CHARS} characters` })
    return v.trim() || undefined
  }
  const query = str('query')
  const category = str('category')?.toLowerCase()
  const entity = str('entity')
  let tags: string[] = []
  const rawTags = own(req, 'tags')
  if (rawTags !== undefined && rawTags !== null) {
    if (!Array.isArray(rawTags) || rawTags.some((t) => typeof t !== 'string')) issues.push({ path: 'tags', message: 'must be an array of strings' })
    else tags = rawTags.map((t: string) => t.trim().toLowerCase()).filter(Boolean)
  }
  const from = parseDate(own(req, 'from'), 'from', issues)
  const to = parseDate(own(req, 'to'), 'to', issues)
  const limits = { ...DEFAULT_LIMITS }
  const rawLimits = own(req, 'limits')
  if (rawLimits !== undefined && rawLimits !== null) {
    if (typeof rawLimits !== 'object' || Array.isArray(rawLimits)) issues.push({ path: 'limits', message: 'must be an object' })
    else
      for (const [k, v] of Object.entries(rawLimits as Record<string, unknown>)) {
        // own keys only: `toString` is `in` every object
        if (!Object.hasOwn(DEFAULT_LIMITS, k)) issues.push({ path: `limits.${k}`, message: 'unknown limit; allowed: entities, relationships, observations, bytes' })
        else if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) issues.push({ path: `limits.${k}`, message: 'must be a whole number ≥ 0' })
        else limits[k as keyof RecallLimits] = Math.min(v, MAX_LIMITS[k as keyof RecallLimits])
      }
  }
  if (from && to && from > to) issues.push({ path: 'from', message: 'is after to' })
  const rawCursor = own(req, 'cursor')
  let cursor: RecallFilter['cursor']
  if (rawCursor !== undefined && rawCursor !== null) {
    cursor = typeof rawCursor === 'string' && rawCursor.length <= CURSOR_CHARS ? decodeCursor(rawCursor) : undefined
    if (!cursor) issues.push({ path: 'cursor', message: 'is not a cursor this memory returned (pass nextCursor from a structural recall)' })
    else if (query) issues.push({ path: 'cursor', message: 'pages structural recall only (no query)' })
  }
  if (issues.length) throw new MemoryError('invalid_request', `recall rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues })
  const filter: RecallFilter = { tags, limits }
  if (query) filter.query = query
  if (category) filter.category = category
  if (entity) filter.entity = entity
  if (from) filter.from = from
  if (to) filter.to = to
  if (cursor) filter.cursor = cursor
  return filter
}

export function hasObservationFilter(f: RecallFilter): boolean {
  return Boolean(f.category || f.tags.length || f.from || f.to || f.entity)
}

/** @internal it takes the graph, which the published types leave out */
export function observationMatches(o: Observation, f: RecallFilter, entityKey: string | undefined, graph: Graph): boolean {
  if (f.category && o.category !== f.category) return false
  if (f.from && o.observedAt < f.from) return false
  if (f.to && o.observedAt > f.to) return false
  for (const t of f.tags) if (!o.tags.includes(t)) return false
  if (entityKey !== undefined && !graph.entities.get(entityKey)?.observations.includes(o.slug)) return false
  return true
}

export function snippetOf(content: string, length: number): { snippet: string; truncated: boolean } {
  if (content.length <= length) return { snippet: content, truncated: false }
  // cut at a word boundary when one is near, so snippets read as text
  const cut = content.slice(0, length)
  const space = cut.lastIndexOf(' ')
  return { snippet: (space > length * 0.6 ? cut.slice(0, space) : cut).trimEnd() + '…', truncated: true }
}

interface Scored {
  key: string
  score: number
  via: 'match' | 'neighbor'
}

/** A note's match with the query, from the note index: in [0, 1], the best note 1. */
export interface NoteMatch {
  slug: string
  score: number
  /** A query word is in the note itself (not only a word like one). */
  lexical: boolean
  /** Which of the query's words (as the note index reports them) the note holds. */
  terms: number
  /** Which of them it holds only by a close paraphrase. */
  paraphrases: number
}

/** An entity's match with the query, from the entity index. */
export interface EntityMatch {
  key: string
  score: number
  /** Which of the query's words (as the entity index reports them) its own texts hold; 0 for vector nearness alone. */
  terms: number
  /** Which of them its texts hold only by a close paraphrase. */
  paraphrases?: number
}

/**
 * How far an entity may rank through the notes that back it rather than its own description:
 * descriptions lead, but an entity whose notes answer the query is not left out.
 */
const NOTE_SUPPORT = 0.5
/**
 * The weights of a note's score. Chosen on the LoCoMo dev conversations (`npm run eval -- --locomo
 * <path> --grid`), not by hand; the eval passes others to measure each one on and off.
 * @internal
 */
export interface RecallTuning {
  /** How much the scores of the recalled entities a note backs add to the note's own match. */
  entityShare: number
  /** Weight of the time a question names (a date, month or year, "last week"). */
  timeShare: number
  /** Recency as a weak prior: the newest note gains at most this much. */
  recencyShare: number
  /** How many of the best first-pass notes lend their context. */
  anchors: number
  /** Share of an anchor's score a note written the same day gains. */
  sessionShare: number
  /** Share of an anchor's score a note near it in time gains, for a question naming no time. */
  nearShare: number
  /** Days after which that share halves. */
  nearHalfLifeDays: number
  /** Lift notes near the anchors for every question naming no time (1), or only for one that asks before / after an event (0). */
  nearAlways: number
  /** Weight of the activation spread from the entities the question names. */
  graphShare: number
  /** Read days, "last week" and "before" / "after" in a question (1), or only months and years (0). */
  timeWords: number
  /** How many of the best first-pass notes the feedback pass takes as what the question is about. */
  feedbackNotes: number
  /** Weight of a note's likeness (vector cosine) to those notes: a second pass over the candidates. */
  feedbackShare: number
  /** Notes the note index matches on the query's words compete even when they back no recalled entity (1), or not (0). */
  directNotes: number
  /** Share of its score each of the best first-pass notes lends the note written right after it on its day (its reply). */
  replyShare: number
  /** How many of the best first-pass notes lend their reply. */
  replyNotes: number
}

export const DEFAULT_TUNING: Readonly<RecallTuning> = {
  entityShare: 0.2,
  timeShare: 0.3,
  recencyShare: 0.02,
  anchors: 1,
  sessionShare: 0.08,
  nearShare: 0.05,
  nearHalfLifeDays: 7,
  nearAlways: 0,
  graphShare: 0.25,
  timeWords: 1,
  feedbackNotes: 3,
  feedbackShare: 0.2,
  directNotes: 1,
  replyShare: 0.15,
  replyNotes: 5,
}

/**
 * How like a query's best notes each candidate is: for each of `among`, the cosine of its vector
 * with the mean of the vectors of `seeds`; undefined in a memory that ranks by words alone.
 */
export type NoteLikeness = (seeds: readonly string[], among: readonly string[]) => ArrayLike<number> | undefined

/** Steps and damping of the activation spread, and the edges an entity passes it along. */
const SPREAD_STEPS = 2
const SPREAD_DAMPING = 0.5
const SPREAD_EDGES = 12
/** An activated entity with more notes than this lends them nothing: a hub's notes are not walked. */
const SPREAD_NOTES_CAP = 200
/** An entity with more edges than this passes no activation on. */
const SPREAD_DEGREE_CAP = 1_000
/** A day with more candidates than this lends no reply: its notes are not read for when they were written (a recall after an open reads that many at most, see NoteLoader.withNotes). */
const REPLY_DAY_CAP = 200

/**
 * Semantic recall. Entities rank by their descriptions (the index's hits) or, more weakly, by
 * the notes that back them; a bounded 1-hop expansion by edge weight adds neighbors. The
 * observations come from the recalled entities and the notes holding the query's words, ordered
 * by how well each answers the query: its own match, fused with its entities' scores, its
 * likeness to the best hits and the time the question names.
 * @internal it takes the graph, which the published types leave out
 */
export function assembleSemantic(graph: Graph, hits: EntityMatch[], notes: NoteMatch[], evidence: QueryEvidence, f: RecallFilter, snippetLength: number, tuning: Readonly<RecallTuning> = DEFAULT_TUNING, likeness?: NoteLikeness): RecallResult {
  return draftSemantic(graph, hits, notes, evidence, f, snippetLength, tuning, likeness).complete()
}

/**
 * `assembleSemantic` ranked, its notes' texts not read yet (see `RecallDraft`).
 * @internal it takes the graph, which the published types leave out
 */
export function draftSemantic(graph: Graph, hits: EntityMatch[], notes: NoteMatch[], evidence: QueryEvidence, f: RecallFilter, snippetLength: number, tuning: Readonly<RecallTuning> = DEFAULT_TUNING, likeness?: NoteLikeness): RecallDraft {
  const allowed = admitNotes(allowedObservations(graph, f), f.within)
  const backed = (key: string): boolean => {
    const e = graph.entities.get(key)
    if (!e) return false
    return !allowed || e.observations.some((s) => allowed.has(s))
  }
  const noteScore = new Map<string, number>()
  for (const n of notes) if (n.score > 0 && (!allowed || allowed.has(n.slug))) noteScore.set(n.slug, n.score)
  // Evidence, per entity: the share of the query its own texts or a note naming it hold. An entity
  // only near the query's vector has none and is no match: it ranks among those that have.
  const matched = new Map<string, number>()
  const held = new Map<string, number>()
  let best = 0
  for (const h of hits) {
    const share = evidence.ofEntity(h.terms, h.paraphrases)
    if (h.score <= 0 || share <= 0 || matched.has(h.key) || !backed(h.key)) continue
    matched.set(h.key, h.score)
    held.set(h.key, share)
    if (share > best) best = share
  }
  // Notes that name no entity come back on their own text, among the others; so may any note
  // holding the query's words (directNotes), whichever entities rank.
  const unlinked: string[] = []
  for (const n of notes) {
    const score = noteScore.get(n.slug)
    const share = evidence.ofNote(n.terms, n.paraphrases)
    if (score === undefined || share <= 0) continue
    if (share > best) best = share
    const keys = graph.entitiesOf(n.slug)
    if (!keys.length || tuning.directNotes) unlinked.push(n.slug)
    // only notes that hold a query word lend their entities a score: a soft likeness alone
    // touches many notes a little, and would bring in every entity they share
    for (const key of keys) {
      const through = NOTE_SUPPORT * score
      if (through > (matched.get(key) ?? 0)) matched.set(key, through)
      if (share > (held.get(key) ?? 0)) held.set(key, share)
    }
  }
  const level = evidence.level(best, () => namesAny(f.query ?? '', held.keys()))
  if (level === 'none') return noMatch(f.query ?? '', best > 0)
  const chosen = new Map<string, Scored>()
  const seedList = [...matched].map(([key, score]) => ({ key, score, via: 'match' as const })).sort(byScore).slice(0, f.limits.entities)
  for (const seed of seedList) chosen.set(seed.key, seed)
  const top = seedList[0]?.score ?? 1
  for (const seed of seedList) {
    let added = 0
    // the heaviest few suffice: a hub has thousands of edges
    for (const r of graph.topEdgesOf(seed.key, EXPANSION_PER_SEED + f.limits.entities).edges) {
      if (added >= EXPANSION_PER_SEED) break
      const other = r.source === seed.key ? r.target : r.source
      if (chosen.has(other) || !backed(other) || (f.within && !f.within.edge(r))) continue
      const weightShare = r.weight / (r.weight + 1)
      chosen.set(other, { key: other, score: seed.score * EXPANSION_DECAY * weightShare, via: 'neighbor' })
      added++
    }
  }
  const ranked = [...chosen.values()].sort(byScore)
  const when = questionTime(f.query ?? '', !tuning.timeWords)
  const scoreNote = (slug: string, entityShare: number): number => (noteScore.get(slug) ?? 0) + tuning.entityShare * entityShare
  const seeds = tuning.graphShare > 0 ? namedEntities(f.query ?? '', held.keys()) : []
  const strength = (key: string): 'strong' | 'weak' => ((held.get(key) ?? 0) >= STRONG_COVERAGE ? 'strong' : 'weak')
  const draft = finish(graph, 'semantic', ranked, f, snippetLength, top, (entities) => rankBacking(graph, entities, unlinked, allowed, (slug) => noteScore.get(slug) ?? 0, scoreNote, when, seeds, tuning, f.limits.observations, likeness), strength)
  return {
    shown: draft.shown,
    complete() {
      const result = draft.complete()
      result.match = level
      if (level === 'weak') result.message = weakMessage(f.query ?? '')
      return result
    },
  }
}

/** Whether the query names one of the entities `keys` (normalized names) as a whole: its words, in order. */
function namesAny(query: string, keys: Iterable<string>): boolean {
  return namedEntities(query, keys).length > 0
}

/** Those of `keys` (normalized names) whose entities the query names as a whole: the seeds of the activation spread. */
function namedEntities(query: string, keys: Iterable<string>): string[] {
  const words = ` ${wordsOf(normalizeName(query))} `
  const out: string[] = []
  for (const key of keys) {
    const name = wordsOf(key)
    if (name && words.includes(` ${name} `)) out.push(key)
  }
  return out
}

function wordsOf(normalized: string): string {
  return normalized.replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
}

/** A semantic recall that found no evidence: nothing comes back, and it says so. */
function noMatch(query: string, stray: boolean): RecallDraft {
  const why = stray ? 'most of its words are nowhere in it, and the few that are do not answer it' : 'no note, entity description or retrieval query holds its words'
  return {
    shown: [],
    complete: () => ({
      mode: 'semantic', entities: [], relationships: [], observations: [], truncation: null, match: 'none' satisfies MatchLevel,
      message: `Nothing in this memory matches "${clip(query)}": ${why}. Do not answer from this memory; try other words or a name it would use, or a structural recall (category, tags, from/to, entity).`,
    }),
  }
}

function weakMessage(query: string): string {
  return `Only part of "${clip(query)}" is in this memory: the entities marked weak hold some of its words, not what it asks as a whole. Treat them as leads, not answers.`
}

function clip(query: string): string {
  return query.length > 80 ? query.slice(0, 79) + '…' : query
}

/**
 * The observations backing the recalled entities, those the note index matched on the query's
 * words (`unlinked`, with `directNotes` any of them), and the notes of
 * entities linked to those the question names, ranked by `scoreNote` with the context of the best
 * hits (same day, near in time, through the graph) and the time the question names; time breaks
 * ties and adds a weak prior toward the end the question leans to. Ranked by slug and time alone:
 * only the texts of those shown are read (see `finish`).
 */
function rankBacking(graph: Graph, entities: RecalledEntity[], unlinked: readonly string[], allowed: NoteSet | undefined, ownMatch: (slug: string) => number, scoreNote: (slug: string, entityShare: number) => number, when: QuestionTime, seeds: readonly string[], tuning: Readonly<RecallTuning>, limit: number, likeness?: NoteLikeness): Chosen[] {
  const backing = new Map<string, { share: number; names: string[]; lent: number }>()
  for (const slug of unlinked) backing.set(slug, { share: 0, names: [], lent: 0 })
  for (const e of entities) {
    for (const slug of graph.entities.get(e.key)!.observations) {
      if (allowed && !allowed.has(slug)) continue
      const cur = backing.get(slug)
      if (cur) {
        cur.names.push(e.name)
        if (e.score > cur.share) cur.share = e.score
      } else backing.set(slug, { share: e.score, names: [e.name], lent: 0 })
    }
  }
  if (seeds.length) lendActivation(graph, seeds, allowed, backing)
  graph.requireTimes(backing.keys())
  const candidates = [...backing].map(([slug, v]) => {
    const observedAt = graph.observedAtOf(slug)!
    return { slug, observedAt, names: v.names, share: v.share, lent: v.lent, score: 0, at: graph.observedMsOf(slug) }
  })
  const byTime = when.order === 'newest' ? newestFirst : (a: Timed, b: Timed) => newestFirst(b, a)
  // recency in proportion to time between the oldest and the newest candidate: no sort by time
  let oldest = Infinity
  let newest = -Infinity
  for (const c of candidates) {
    if (c.at < oldest) oldest = c.at
    if (c.at > newest) newest = c.at
  }
  const span = newest - oldest
  const range = when.range ?? (when.last && newest > -Infinity ? lastPeriod(when.last, newest) : undefined)
  // the context of the best hits by their own match: their session, and their time when the question names none
  const own = candidates.map((c) => ({ at: c.at, score: ownMatch(c.slug) }))
  const anchors = anchorsOf(own, tuning.anchors)
  const session = sessionLift(own, anchors, tuning.sessionShare)
  // a question that asks when is answered by the note of the event, not by what followed it
  const replied = tuning.replyShare > 0 && !when.asksTime ? anchorsOf(own, tuning.replyNotes) : []
  const reply = replied.length ? replyLift(own, writtenOf(graph, candidates, replied), replied, tuning.replyShare) : undefined
  const near = range || (!when.relation && !tuning.nearAlways) ? undefined : timeAnchorLift(own, anchors, tuning.nearShare, tuning.nearHalfLifeDays, when.relation)
  for (const c of candidates) c.score = scoreNote(c.slug, c.share) + tuning.graphShare * c.lent
  if (likeness && tuning.feedbackShare > 0) feedback(candidates, own, likeness, tuning)
  candidates.forEach((c, i) => {
    const recent = span > 0 ? (when.order === 'newest' ? c.at - oldest : newest - c.at) / span : 0
    c.score += session[i]! + (near ? near[i]! : 0) + (reply ? reply[i]! : 0) + tuning.recencyShare * recent
    if (range && c.observedAt >= range.from && c.observedAt < range.to) c.score += tuning.timeShare
  })
  return rankTop(candidates, limit, (a, b) => b.score - a.score || byTime(a, b))
}

/**
 * When each candidate written on an anchor's day was written (its createdAt, which every replica
 * of the memory holds alike), NaN for the others. Those notes are read, only for a day with
 * another candidate beside the anchors and with at most `REPLY_DAY_CAP` of them: a day of
 * thousands of notes is no conversation to follow.
 */
function writtenOf(graph: Graph, candidates: ReadonlyArray<{ slug: string; at: number }>, anchors: readonly number[]): Float64Array {
  const written = new Float64Array(candidates.length).fill(NaN)
  const perDay = new Map<number, number>()
  for (const i of anchors) perDay.set(Math.floor(candidates[i]!.at / DAY_MS), 0)
  const dayOf = candidates.map((c) => Math.floor(c.at / DAY_MS))
  for (const day of dayOf) if (perDay.has(day)) perDay.set(day, perDay.get(day)! + 1)
  const onDay: number[] = []
  dayOf.forEach((day, i) => {
    const n = perDay.get(day)
    if (n !== undefined && n > 1 && n <= REPLY_DAY_CAP) onDay.push(i)
  })
  graph.requireNotes(onDay.map((i) => candidates[i]!.slug))
  for (const i of onDay) written[i] = Date.parse(graph.getObservation(candidates[i]!.slug)!.createdAt)
  return written
}

/**
 * The feedback pass: the best first-pass notes say what the question is about in the memory's
 * own words; each candidate the note index matched gains `feedbackShare` of its likeness to
 * them. Only those candidates are compared, so the work is bounded by the note index's hits, not
 * by a hub's notes.
 */
function feedback(candidates: Array<{ slug: string; score: number }>, own: readonly ContextCandidate[], likeness: NoteLikeness, tuning: Readonly<RecallTuning>): void {
  const top = anchorsOf(own, tuning.feedbackNotes).map((i) => candidates[i]!.slug)
  if (!top.length) return
  const matched = candidates.filter((_, i) => own[i]!.score > 0)
  const like = likeness(top, matched.map((c) => c.slug))
  if (!like) return
  matched.forEach((c, i) => {
    c.score += tuning.feedbackShare * Math.max(0, like[i]!)
  })
}

/**
 * Spreads activation from the entities the question names over their heaviest edges, and lends
 * each note of an activated entity its share (see `activationPerNote`); those notes join the
 * candidates. A hub's notes are not walked (each would gain next to nothing).
 */
function lendActivation(graph: Graph, seeds: readonly string[], allowed: NoteSet | undefined, backing: Map<string, { share: number; names: string[]; lent: number }>): void {
  // an entity's edges are read once, however often the spread comes back to it
  const seen = new Map<string, Link[]>()
  const linksOf = (key: string): Link[] => {
    let links = seen.get(key)
    if (links) return links
    // a hub's thousands of edges are not walked: it keeps what reaches it
    const hub = (graph.entities.get(key)?.degree ?? 0) > SPREAD_DEGREE_CAP
    seen.set(key, (links = hub ? [] : graph.topEdgesOf(key, SPREAD_EDGES).edges.map((r) => ({ other: r.source === key ? r.target : r.source, weight: r.weight }))))
    return links
  }
  for (const [key, activation] of spreadActivation(seeds, linksOf, SPREAD_STEPS, SPREAD_DAMPING)) {
    const e = graph.entities.get(key)
    if (!e) continue
    const per = activationPerNote(activation, e.observations.length)
    // a hub lends each note next to nothing: its notes are not walked
    if (e.observations.length > SPREAD_NOTES_CAP) continue
    for (const slug of e.observations) {
      if (allowed && !allowed.has(slug)) continue
      const cur = backing.get(slug)
      if (cur) cur.lent += per
      else backing.set(slug, { share: 0, names: [], lent: per })
    }
  }
}

/**
 * The first `k` of `items` in the order `compare` gives, then the rest unordered: a hub's
 * thousands of notes are not sorted to return a dozen.
 */
function rankTop<T>(items: T[], k: number, compare: (a: T, b: T) => number): T[] {
  if (k <= 0) return items
  if (items.length <= k * 4) return items.sort(compare)
  const top: T[] = []
  const rest: T[] = []
  for (const item of items) {
    if (top.length === k && compare(item, top[k - 1]!) >= 0) {
      rest.push(item)
      continue
    }
    let at = top.length
    while (at > 0 && compare(item, top[at - 1]!) < 0) at--
    top.splice(at, 0, item)
    if (top.length > k) rest.push(top.pop()!)
  }
  return [...top, ...rest]
}

function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || (a.key < b.key ? -1 : 1)
}

/**
 * Structural recall: the observations the filters select, newest first, a page at a time
 * (`cursor` continues after the last one returned); entities by how many of the page name them.
 * @internal it takes the graph, which the published types leave out
 */
export function assembleStructural(graph: Graph, f: RecallFilter, snippetLength: number): RecallResult {
  const allowed = allowedObservations(graph, f)
  const selected: Observation[] = []
  for (const o of allowed ? [...allowed].map((s) => graph.getObservation(s)!) : graph.allObservations()) {
    if (f.within && !f.within.note(o.slug)) continue
    if (!f.cursor || newestFirst(o, f.cursor) > 0) selected.push(o)
  }
  selected.sort(newestFirst)
  const page = selected.slice(0, f.limits.observations)
  const counts = new Map<string, number>()
  for (const o of page) for (const k of graph.entitiesOf(o.slug)) counts.set(k, (counts.get(k) ?? 0) + 1)
  const max = Math.max(1, ...counts.values())
  const ranked: Scored[] = [...counts]
    .map(([key, n]) => ({ key, score: n / max, via: 'match' as const }))
    .sort((a, b) => b.score - a.score || (graph.entities.get(b.key)?.degree ?? 0) - (graph.entities.get(a.key)?.degree ?? 0) || (a.key < b.key ? -1 : 1))
  const result = finish(graph, 'structural', ranked, f, snippetLength, 1, (entities) => {
    const names = new Map(entities.map((e) => [e.key, e.name]))
    return selected.map((o) => ({ slug: o.slug, o, names: graph.entitiesOf(o.slug).flatMap((k) => (names.has(k) ? [names.get(k)!] : [])) }))
  }).complete()
  const last = result.observations[result.observations.length - 1]
  if (last && result.observations.length < selected.length) result.nextCursor = encodeCursor({ observedAt: last.observedAt, slug: last.slug })
  return result
}

/** Where a page of structural recall ended: opaque to callers. */
export function encodeCursor(at: { observedAt: string; slug: string }): string {
  return 'c1.' + toBase64Url(JSON.stringify([at.observedAt, at.slug]))
}

export function decodeCursor(cursor: string): { observedAt: string; slug: string } | undefined {
  if (!cursor.startsWith('c1.')) return undefined
  try {
    const value = JSON.parse(fromBase64Url(cursor.slice(3))) as unknown
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') return { observedAt: value[0], slug: value[1] }
  } catch {
    // not one of ours
  }
  return undefined
}

function toBase64Url(text: string): string {
  let binary = ''
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
}

/** What orders notes in time: when observed, then slug. */
type Timed = Pick<Observation, 'observedAt' | 'slug'>

/** Newest first by observedAt, then slug: the order of structural recall and of ties. */
function newestFirst(a: Timed, b: Timed): number {
  return a.observedAt > b.observedAt ? -1 : a.observedAt < b.observedAt ? 1 : a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}

function allowedObservations(graph: Graph, f: RecallFilter): Set<string> | undefined {
  if (!hasObservationFilter(f)) return undefined
  let entityKey: string | undefined
  if (f.entity) entityKey = graph.resolveName(f.entity)
  const out = new Set<string>()
  const pool = entityKey !== undefined ? (graph.entities.get(entityKey)?.observations ?? []).map((s) => graph.getObservation(s) as Observation) : graph.allObservations()
  for (const o of pool) if (o && observationMatches(o, f, entityKey, graph)) out.add(o.slug)
  return out
}

interface Chosen {
  slug: string
  /** The note, when the chooser read it already. */
  o?: Observation
  /** Names of the recalled entities the observation backs. */
  names: string[]
}

/**
 * A recall ranked but not yet written out: `complete` reads the texts of the notes it shows,
 * which an opened memory may still hold in storage. Its reader reads those first, so that
 * nothing is ranked twice.
 * @internal
 */
export interface RecallDraft {
  /** The notes the result shows, in order. */
  readonly shown: readonly string[]
  /** The result; throws `NoteInStorage` while any shown note is still in storage. */
  complete(): RecallResult
}

function finish(graph: Graph, mode: RecallResult['mode'], ranked: Scored[], f: RecallFilter, snippetLength: number, topScore: number, choose: (entities: RecalledEntity[]) => Chosen[], strength?: (key: string) => 'strong' | 'weak'): RecallDraft {
  const { limits } = f
  const keptScored = ranked.slice(0, limits.entities)
  const entities: RecalledEntity[] = keptScored.map((s) => {
    const e = graph.entities.get(s.key)!
    const entity: RecalledEntity = { name: e.name, key: e.key, type: e.type, description: e.description, degree: e.degree, score: round(s.score / (topScore || 1)), via: s.via }
    if (strength && s.via === 'match') entity.match = strength(s.key)
    return entity
  })
  const keys = new Set(entities.map((e) => e.key))
  const rank = new Map(entities.map((e, i) => [e.key, i]))
  // edges among the chosen entities, those of the best-ranked entities first, then by weight
  const edgeSet = new Map<string, { r: ReturnType<Graph['edgesOf']>[number]; best: number }>()
  for (const r of graph.edgesAmong(keys)) {
    if (!f.within || f.within.edge(r)) edgeSet.set(r.key, { r, best: Math.min(rank.get(r.source)!, rank.get(r.target)!) })
  }
  const edgesAll = [...edgeSet.values()].sort((a, b) => a.best - b.best || b.r.weight - a.r.weight || (a.r.key < b.r.key ? -1 : 1))
  const relationships: RecalledRelationship[] = edgesAll.slice(0, limits.relationships).map((x) => ({ ...graph.present(x.r), ...f.within?.edgeMarks(x.r) }))
  const obsRanked = choose(entities)
  const shown = obsRanked.slice(0, limits.observations)
  return {
    shown: shown.map((c) => c.slug),
    complete() {
      graph.requireNotes(shown.flatMap((c) => (c.o ? [] : [c.slug])))
      const observations: Snippet[] = shown.map(({ slug, o: read, names }) => {
        const o = read ?? graph.getObservation(slug)!
        const { snippet, truncated } = snippetOf(o.content, snippetLength)
        return { slug: o.slug, title: o.title, category: o.category, tags: o.tags, observedAt: o.observedAt, snippet, truncated, entities: names, ...f.within?.marks(o.slug) }
      })
      const dropped = {
        entities: ranked.length - entities.length,
        relationships: edgesAll.length - relationships.length,
        observations: obsRanked.length - observations.length,
      }
      // copies of the lists: capping shortens them, and a draft may be completed again
      const result: RecallResult = { mode, entities: [...entities], relationships: [...relationships], observations, truncation: null }
      capBytes(result, limits.bytes, dropped)
      if (dropped.entities || dropped.relationships || dropped.observations) {
        result.truncation = {
          ...dropped,
          note: `Results were capped: ${dropped.entities} entities, ${dropped.relationships} relationships and ${dropped.observations} observations were left out. Narrow the recall with category, tags, from/to or entity rather than raising the limits; read a whole observation by its slug.`,
        }
      }
      return result
    },
  }
}

const encoder = new TextEncoder()
function bytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length
}

/** Drops the lowest-ranked observations, then edges, then entities until the payload fits. */
function capBytes(result: RecallResult, max: number, dropped: { entities: number; relationships: number; observations: number }): void {
  const reserve = 600 // room for the truncation note itself
  let size = bytes(result) + reserve
  const shrink = (list: unknown[], key: keyof typeof dropped): void => {
    while (size > max && list.length > 0) {
      const item = list.pop()
      size -= bytes(item) + 1
      dropped[key]++
    }
  }
  shrink(result.observations, 'observations')
  shrink(result.relationships, 'relationships')
  if (size > max) {
    shrink(result.entities, 'entities')
    const keep = new Set(result.entities.map((e) => e.name))
    const before = result.relationships.length
    result.relationships = result.relationships.filter((r) => keep.has(r.source) && keep.has(r.target))
    dropped.relationships += before - result.relationships.length
  }
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000
}
