// Browsing what a memory holds, for people: every observation page by page (newest first or by
// when it was observed), and the names and relationship types a note can link to.
import { MemoryError } from './errors'
import { RECALL_TEXT_CHARS } from './limits'
import type { Graph } from './graph'
import { normalizeName } from './normalize'
import { snippetOf } from './recall'

export interface NoteListRequest {
  category?: string
  tags?: string[]
  /** ISO date or date-time; a date alone means the start of that day. */
  from?: string
  /** ISO date or date-time; a date alone means the end of that day. */
  to?: string
  /** An entity name (or alias): only the notes that name it. */
  entity?: string
  /** `written` (default): newest write first; `observed`: the timeline, latest observedAt first. */
  order?: 'written' | 'observed'
  /**
   * Words to find in the notes' own title and text (stemmed, as recall matches words), every note
   * linked to entities or not; the best matches first, whatever `order` says.
   */
  text?: string
  /** From the previous page's `nextCursor`. */
  cursor?: string
  /** 1 to 200; default 50. */
  limit?: number
}

export interface NoteSummary {
  slug: string
  title: string
  category: string
  tags: string[]
  observedAt: string
  createdAt: string
  updatedAt: string
  snippet: string
  truncated: boolean
  /** Entity names as this note wrote them. */
  entities: string[]
  /** With `text`: the words of the note that match it, to highlight. */
  matches?: string[]
}

export interface NotePage {
  notes: NoteSummary[]
  /** How many notes pass the filters, over all pages. */
  total: number
  /** Pass back as `cursor` for the next page; null on the last one. */
  nextCursor: string | null
}

export interface Vocabulary {
  /** Every entity, most connected first, with the name it is shown under. */
  entities: Array<{ key: string; name: string; type: string; degree: number }>
  /** Merged-away names (normalized) and the key of the entity they now mean. */
  aliases: Array<{ variant: string; canonical: string }>
  /** Relationship types in use, most used first. */
  relationshipTypes: Array<{ type: string; count: number }>
}

const FIELDS = new Set(['category', 'tags', 'from', 'to', 'entity', 'order', 'text', 'cursor', 'limit'])
/** Notes a text search ranks, at most: past this many, narrow the words or the filters. */
export const NOTE_SEARCH_MAX = 1_000
export const NOTE_PAGE_DEFAULT = 50
export const NOTE_PAGE_MAX = 200
const SNIPPET_CHARS = 200

function bad(message: string): never {
  throw new MemoryError('invalid_request', `listObservations rejected: ${message}`, { message })
}

function optionalString(raw: Record<string, unknown>, key: string): string | undefined {
  const v = Object.hasOwn(raw, key) ? raw[key] : undefined
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string' || v.length > RECALL_TEXT_CHARS) bad(`${key} must be a string of at most ${RECALL_TEXT_CHARS} characters`)
  return v.trim() || undefined
}

/** A date-only bound covers its whole day, so "to 2026-12-03" includes that afternoon. */
function bound(value: string | undefined, key: 'from' | 'to'): string | undefined {
  if (value === undefined) return undefined
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value)
  const ms = Date.parse(dateOnly ? `${value}T00:00:00.000Z` : value)
  if (Number.isNaN(ms)) bad(`${key} must be an ISO date such as 2026-12-03`)
  return new Date(dateOnly && key === 'to' ? ms + 86_400_000 - 1 : ms).toISOString()
}

interface Parsed {
  category?: string
  tags: string[]
  from?: string
  to?: string
  entity?: string
  order: 'written' | 'observed'
  text?: string
  after?: [string, string]
  limit: number
}

/** The words a note list request searches for, checked as `listNotes` checks them; undefined for none. */
export function noteSearchText(request: unknown): string | undefined {
  return parse(request).text
}

function parse(request: unknown): Parsed {
  if (request === undefined || request === null) request = {}
  if (typeof request !== 'object' || Array.isArray(request)) bad('the request is an object { category?, tags?, from?, to?, entity?, order?, text?, cursor?, limit? }')
  const raw = request as Record<string, unknown>
  for (const k of Object.keys(raw)) if (!FIELDS.has(k)) bad(`unknown field ${k}; allowed: ${[...FIELDS].join(', ')}`)
  const out: Parsed = { tags: [], order: 'written', limit: NOTE_PAGE_DEFAULT }
  const category = optionalString(raw, 'category')
  if (category) out.category = category.toLowerCase()
  const tags = raw.tags
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) bad('tags must be an array of strings')
    out.tags = (tags as string[]).map((t) => t.trim().toLowerCase()).filter(Boolean)
  }
  const from = bound(optionalString(raw, 'from'), 'from')
  const to = bound(optionalString(raw, 'to'), 'to')
  if (from) out.from = from
  if (to) out.to = to
  if (from && to && from > to) bad('from is after to')
  const entity = optionalString(raw, 'entity')
  if (entity) out.entity = entity
  const text = optionalString(raw, 'text')
  if (text) out.text = text
  const order = raw.order
  if (order !== undefined && order !== null) {
    if (order !== 'written' && order !== 'observed') bad('order is "written" or "observed"')
    out.order = order
  }
  const cursor = optionalString(raw, 'cursor')
  if (cursor) {
    let decoded: unknown
    try {
      decoded = JSON.parse(cursor)
    } catch {
      decoded = undefined
    }
    if (!Array.isArray(decoded) || decoded.length !== 2 || !decoded.every((p) => typeof p === 'string')) bad('cursor is not one this method returned')
    out.after = decoded as [string, string]
  }
  const limit = raw.limit
  if (limit !== undefined && limit !== null) {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > NOTE_PAGE_MAX) bad(`limit must be a whole number from 1 to ${NOTE_PAGE_MAX}`)
    out.limit = limit
  }
  return out
}

/**
 * One page of observations that pass the filters. The cursor holds the last note's sort value
 * and slug, so a page stays in place when notes are written or deleted between pages. With a
 * `text`, `found` is what the note index matched, best first, and sets the order.
 * @internal it takes the graph, which the published types leave out
 */
export function listNotes(graph: Graph, request: unknown, found?: ReadonlyArray<{ slug: string; words: string[] }>): NotePage {
  const f = parse(request)
  let pool: Iterable<string> | undefined
  if (f.entity) {
    const key = graph.resolve(normalizeName(f.entity))
    pool = graph.entities.get(key)?.observations ?? []
  }
  const rank = f.text ? new Map((found ?? []).map((n, i) => [n.slug, i])) : undefined
  const words = new Map((found ?? []).map((n) => [n.slug, n.words]))
  if (rank) {
    const named = pool ? new Set(pool) : undefined
    pool = [...rank.keys()].filter((s) => !named || named.has(s))
  }
  // a search's order is its rank, written so that the string order below (largest first) keeps it
  const sortValue = rank
    ? (o: { slug: string }) => String(NOTE_SEARCH_MAX - rank.get(o.slug)!).padStart(7, '0')
    : f.order === 'observed' ? (o: { observedAt: string }) => o.observedAt : (o: { createdAt: string }) => o.createdAt
  const rows: Array<{ value: string; slug: string }> = []
  const candidates = pool ? [...pool].map((s) => graph.getObservation(s)).filter((o) => o !== undefined) : graph.allObservations()
  for (const o of candidates) {
    if (f.category && o.category !== f.category) continue
    if (f.from && o.observedAt < f.from) continue
    if (f.to && o.observedAt > f.to) continue
    if (f.tags.some((t) => !o.tags.includes(t))) continue
    rows.push({ value: sortValue(o), slug: o.slug })
  }
  // newest first; equal times by slug so every page boundary is well defined
  const before = (a: { value: string; slug: string }, b: { value: string; slug: string }): boolean => a.value > b.value || (a.value === b.value && a.slug < b.slug)
  rows.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
  let start = 0
  if (f.after) {
    const [value, slug] = f.after
    start = rows.findIndex((r) => before({ value, slug }, r))
    if (start < 0) start = rows.length
  }
  const page = rows.slice(start, start + f.limit)
  const notes = page.map(({ slug }) => {
    const o = graph.getObservation(slug)!
    const { snippet, truncated } = rank ? snippetAround(o.content, words.get(slug) ?? []) : snippetOf(o.content, SNIPPET_CHARS)
    const summary: NoteSummary = {
      slug: o.slug, title: o.title, category: o.category, tags: [...o.tags], observedAt: o.observedAt, createdAt: o.createdAt, updatedAt: o.updatedAt,
      snippet, truncated, entities: o.entities.map((e) => e.name),
    }
    if (rank) summary.matches = words.get(o.slug) ?? []
    return summary
  })
  const last = page.at(-1)
  const more = start + f.limit < rows.length
  return { notes, total: rows.length, nextCursor: more && last ? JSON.stringify([last.value, last.slug]) : null }
}

/** A snippet that shows the first matching word, where the note's start would not. */
function snippetAround(content: string, words: readonly string[]): { snippet: string; truncated: boolean } {
  const at = Math.min(...words.map((w) => content.indexOf(w)).filter((i) => i >= 0))
  if (!Number.isFinite(at) || at < SNIPPET_CHARS * 0.7) return snippetOf(content, SNIPPET_CHARS)
  const start = content.lastIndexOf(' ', at - SNIPPET_CHARS / 4) + 1
  const rest = snippetOf(content.slice(start), SNIPPET_CHARS)
  return { snippet: '…' + rest.snippet, truncated: true }
}

/** What a note can link to: every entity name, every alias and the relationship types in use. @internal */
export function vocabularyOf(graph: Graph): Vocabulary {
  const entities = [...graph.entities.values()]
    .map(({ key, name, type, degree }) => ({ key, name, type, degree }))
    .sort((a, b) => b.degree - a.degree || (a.key < b.key ? -1 : 1))
  const aliases = [...graph.aliasMap()].map(([variant, canonical]) => ({ variant, canonical: graph.resolve(canonical) }))
  const counts = new Map<string, number>()
  for (const r of graph.relationships.values()) counts.set(r.type, (counts.get(r.type) ?? 0) + r.observations.length)
  const relationshipTypes = [...counts].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || (a.type < b.type ? -1 : 1))
  return { entities, aliases, relationshipTypes }
}
