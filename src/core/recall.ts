// Recall assembly: from ranked entities (semantic) or filtered observations (structural) to
// one bounded payload of entities, the edges among them and a snippet per source observation.
import { MemoryError } from './errors'
import { own, parseDate, type Issue } from './contract'
import type { Graph } from './graph'
import { normalizeName } from './normalize'
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
}

const REQUEST_FIELDS = new Set(['query', 'category', 'tags', 'from', 'to', 'entity', 'limits'])

/** Validates a recall request; limits above the ceilings are clamped to them. */
export function parseRecallRequest(raw: unknown): RecallFilter {
  const issues: Issue[] = []
  const req = (raw ?? {}) as Record<string, unknown>
  if (typeof req !== 'object' || Array.isArray(req)) throw new MemoryError('invalid_request', 'recall takes an object { query?, category?, tags?, from?, to?, entity?, limits? }')
  for (const k of Object.keys(req)) if (!REQUEST_FIELDS.has(k)) issues.push({ path: k, message: `unknown field; allowed: ${[...REQUEST_FIELDS].join(', ')}` })
  const str = (k: string): string | undefined => {
    const v = own(req, k)
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string') return void issues.push({ path: k, message: 'must be a string' })
    if (v.length > 2_000) return void issues.push({ path: k, message: 'is longer than 2,000 characters' })
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
  if (issues.length) throw new MemoryError('invalid_request', `recall rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues })
  const filter: RecallFilter = { tags, limits }
  if (query) filter.query = query
  if (category) filter.category = category
  if (entity) filter.entity = entity
  if (from) filter.from = from
  if (to) filter.to = to
  return filter
}

export function hasObservationFilter(f: RecallFilter): boolean {
  return Boolean(f.category || f.tags.length || f.from || f.to || f.entity)
}

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

/** Semantic recall: seeds ranked by the index, a bounded 1-hop expansion by edge weight. */
export function assembleSemantic(graph: Graph, hits: Array<{ key: string; score: number }>, f: RecallFilter, snippetLength: number): RecallResult {
  const allowed = allowedObservations(graph, f)
  const backed = (key: string): boolean => {
    const e = graph.entities.get(key)
    if (!e) return false
    return !allowed || e.observations.some((s) => allowed.has(s))
  }
  const seeds = hits.filter((h) => h.score > 0 && backed(h.key))
  const chosen = new Map<string, Scored>()
  for (const h of seeds) if (!chosen.has(h.key)) chosen.set(h.key, { key: h.key, score: h.score, via: 'match' })
  const seedList = [...chosen.values()].slice(0, f.limits.entities)
  const top = seedList[0]?.score ?? 1
  for (const seed of seedList) {
    let added = 0
    for (const r of graph.edgesOf(seed.key)) {
      if (added >= EXPANSION_PER_SEED) break
      const other = r.source === seed.key ? r.target : r.source
      if (chosen.has(other) || !backed(other)) continue
      const weightShare = r.weight / (r.weight + 1)
      chosen.set(other, { key: other, score: seed.score * EXPANSION_DECAY * weightShare, via: 'neighbor' })
      added++
    }
  }
  const ranked = [...chosen.values()].sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1))
  return finish(graph, 'semantic', ranked, allowed, f, snippetLength, top)
}

/** Structural recall: observations by filter, newest first; entities by how many of them name it. */
export function assembleStructural(graph: Graph, f: RecallFilter, snippetLength: number): RecallResult {
  const allowed = allowedObservations(graph, f) ?? new Set([...graph.allObservations()].map((o) => o.slug))
  const counts = new Map<string, number>()
  for (const slug of allowed) {
    const o = graph.getObservation(slug)
    if (!o) continue
    for (const e of o.entities) {
      const k = graph.resolve(normalizeName(e.name))
      if (graph.entities.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1)
    }
  }
  const max = Math.max(1, ...counts.values())
  const ranked: Scored[] = [...counts]
    .map(([key, n]) => ({ key, score: n / max, via: 'match' as const }))
    .sort((a, b) => b.score - a.score || (graph.entities.get(b.key)?.degree ?? 0) - (graph.entities.get(a.key)?.degree ?? 0) || (a.key < b.key ? -1 : 1))
  return finish(graph, 'structural', ranked, allowed, f, snippetLength, 1)
}

function allowedObservations(graph: Graph, f: RecallFilter): Set<string> | undefined {
  if (!hasObservationFilter(f)) return undefined
  let entityKey: string | undefined
  if (f.entity) entityKey = graph.resolve(normalizeName(f.entity))
  const out = new Set<string>()
  const pool = entityKey !== undefined ? (graph.entities.get(entityKey)?.observations ?? []).map((s) => graph.getObservation(s) as Observation) : graph.allObservations()
  for (const o of pool) if (o && observationMatches(o, f, entityKey, graph)) out.add(o.slug)
  return out
}

function finish(graph: Graph, mode: RecallResult['mode'], ranked: Scored[], allowed: Set<string> | undefined, f: RecallFilter, snippetLength: number, topScore: number): RecallResult {
  const { limits } = f
  const keptScored = ranked.slice(0, limits.entities)
  const entities: RecalledEntity[] = keptScored.map((s) => {
    const e = graph.entities.get(s.key)!
    return { name: e.name, key: e.key, type: e.type, description: e.description, degree: e.degree, score: round(s.score / (topScore || 1)), via: s.via }
  })
  const keys = new Set(entities.map((e) => e.key))
  const rank = new Map(entities.map((e, i) => [e.key, i]))
  // edges among the chosen entities, those of the best-ranked entities first, then by weight
  const edgeSet = new Map<string, { r: ReturnType<Graph['edgesOf']>[number]; best: number }>()
  for (const k of keys) {
    for (const r of graph.edgesOf(k)) {
      if (keys.has(r.source) && keys.has(r.target) && !edgeSet.has(r.key)) edgeSet.set(r.key, { r, best: Math.min(rank.get(r.source)!, rank.get(r.target)!) })
    }
  }
  const edgesAll = [...edgeSet.values()].sort((a, b) => a.best - b.best || b.r.weight - a.r.weight || (a.r.key < b.r.key ? -1 : 1))
  const relationships: RecalledRelationship[] = edgesAll.slice(0, limits.relationships).map((x) => graph.present(x.r))
  // observations backing the chosen entities, ranked by the scores of the entities they back
  const obsScore = new Map<string, { score: number; names: string[] }>()
  entities.forEach((e) => {
    for (const slug of graph.entities.get(e.key)!.observations) {
      if (allowed && !allowed.has(slug)) continue
      const cur = obsScore.get(slug) ?? { score: 0, names: [] }
      cur.score += e.score
      cur.names.push(e.name)
      obsScore.set(slug, cur)
    }
  })
  const obsRanked = [...obsScore].map(([slug, v]) => ({ o: graph.getObservation(slug)!, ...v }))
  obsRanked.sort((a, b) => b.score - a.score || (a.o.observedAt > b.o.observedAt ? -1 : a.o.observedAt < b.o.observedAt ? 1 : a.o.slug < b.o.slug ? -1 : 1))
  const observations: Snippet[] = obsRanked.slice(0, limits.observations).map(({ o, names }) => {
    const { snippet, truncated } = snippetOf(o.content, snippetLength)
    return { slug: o.slug, title: o.title, category: o.category, tags: o.tags, observedAt: o.observedAt, snippet, truncated, entities: names }
  })
  const dropped = {
    entities: ranked.length - entities.length,
    relationships: edgesAll.length - relationships.length,
    observations: obsRanked.length - observations.length,
  }
  const result: RecallResult = { mode, entities, relationships, observations, truncation: null }
  capBytes(result, limits.bytes, dropped)
  if (dropped.entities || dropped.relationships || dropped.observations) {
    result.truncation = {
      ...dropped,
      note: `Results were capped: ${dropped.entities} entities, ${dropped.relationships} relationships and ${dropped.observations} observations were left out. Narrow the recall with category, tags, from/to or entity rather than raising the limits; read a whole observation by its slug.`,
    }
  }
  return result
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
