// Consolidation: proposes entity merges for variant names, and folds accepted merges into
// the alias map. Proposals are only suggestions; nothing here changes the graph.
//
// Candidates come from blocking (shared core name, acronym, sorted words, one-edit typo keys,
// rare description words within one type), never from all pairs, so 10k entities stay cheap.
import { DEFAULT_ENTITY_TYPE } from './contract'
import { MemoryError } from './errors'
import { words } from './normalize'
import type { Entity, MergeEvidence, MergeProposal, Relationship } from './types'
import { VariantIndex, compareNames, nameSignature, namesContrast, type NameSignature } from './variants'

export { findPossibleDuplicates, VariantIndex, variantKey } from './variants'

/**
 * Proposals scoring below this are not emitted. Chosen so that one strong name signal
 * (core name 0.9, acronym of 3+ letters 0.8, reordering 0.8, typo in a 10+ letter word 0.65)
 * passes alone, while weak ones (two-letter acronym, lone surname, short typo) and
 * description or neighbor evidence alone need support from another signal.
 */
export const MERGE_THRESHOLD = 0.6
export const DEFAULT_PROPOSAL_LIMIT = 100

/** Score factor when both entities have different, explicit types (`Apple` company vs fruit); the default agrees with any. */
const TYPE_MISMATCH_FACTOR = 0.8
/** Score factor for names that share words or extend each other without a name signal. */
const CONTRAST_FACTOR = 0.5
/** Descriptions less similar than this (cosine) give no evidence. */
const DESCRIPTION_MIN_SIMILARITY = 0.6
/** A description word shared by more entities than this does not form a candidate block. */
const DESCRIPTION_BLOCK_MAX_DF = 20
/** Each entity joins the blocks of its this-many rarest description words. */
const DESCRIPTION_BLOCK_WORDS = 3
/** Pairs taken from one oversized name block; a block this large is pathological input. */
const NAME_BLOCK_CAP = 64

const DESCRIPTION_STOP_WORDS = new Set([
  'a', 'an', 'the', 'of', 'and', 'or', 'in', 'on', 'at', 'to', 'for', 'with', 'by', 'from', 'as', 'is', 'are', 'was',
  'were', 'be', 'been', 'it', 'its', 'this', 'that', 'which', 'who', 'whom', 'into', 'than', 'then', 'also', 'not',
  'no', 'but', 'has', 'have', 'had',
])

export interface ProposeMergesInput {
  entities: Iterable<Entity>
  relationships: Iterable<Relationship>
  /** Ids of proposals a reviewer rejected; their pairs are never proposed again. */
  rejected: ReadonlySet<string>
  /** Timestamp for `createdAt` of the proposals. */
  now: string
  /** At most this many proposals, the best first (default `DEFAULT_PROPOSAL_LIMIT`). */
  limit?: number
}

/**
 * Merge proposals scoring at least `MERGE_THRESHOLD`, best first (score, then id). The
 * output depends only on the content of the input, not on its order.
 */
export function proposeMerges(input: ProposeMergesInput): MergeProposal[] {
  const entities = new Map<string, Entity>()
  for (const e of [...input.entities].sort((a, b) => cmp(a.key, b.key))) entities.set(e.key, e)
  const index = new VariantIndex()
  for (const e of entities.values()) index.add(e.key, e.name)
  const neighbors = neighborSets(input.relationships, entities)
  const vectors = descriptionVectors(entities)

  // smaller key -> larger keys
  const candidates = new Map<string, Set<string>>()
  const seen = (a: string, b: string): boolean => (a < b ? candidates.get(a)?.has(b) : candidates.get(b)?.has(a)) === true
  const addPair = (a: string, b: string): void => {
    if (a === b) return
    const [x, y] = a < b ? [a, b] : [b, a]
    let set = candidates.get(x)
    if (!set) candidates.set(x, (set = new Set()))
    set.add(y)
  }
  for (const [a, b] of index.pairs(NAME_BLOCK_CAP)) addPair(a, b)
  // without a name signal only a similar description can lift a pair over the threshold
  // (neighbors alone weigh at most 0.5), so description candidates are filtered first
  for (const block of descriptionBlocks(entities, vectors)) {
    for (let i = 0; i < block.length; i++) {
      const vi = vectors.get(block[i]!)!
      for (let j = i + 1; j < block.length; j++) {
        if (!seen(block[i]!, block[j]!) && cosine(vi, vectors.get(block[j]!)!) >= DESCRIPTION_MIN_SIMILARITY) addPair(block[i]!, block[j]!)
      }
    }
  }

  const scored: Array<{ a: Entity; b: Entity; score: number; evidence: MergeEvidence[] }> = []
  for (const [ka, kbs] of candidates) {
    for (const kb of kbs) {
      const a = entities.get(ka)!
      const b = entities.get(kb)!
      const r = scorePair(a, b, index.signature(ka)!, index.signature(kb)!, neighbors, vectors)
      if (r.score >= MERGE_THRESHOLD) scored.push({ a, b, ...r })
    }
  }

  const proposals: MergeProposal[] = []
  for (const { a, b, score, evidence } of scored) {
    const id = pairId(a.key, b.key)
    if (input.rejected.has(id)) continue
    proposals.push({
      id,
      kind: 'merge',
      pair: [a.key, b.key],
      names: [a.name, b.name],
      canonical: chooseCanonical(a, b).key,
      score,
      evidence,
      status: 'open',
      createdAt: input.now,
    })
  }
  proposals.sort((x, y) => y.score - x.score || cmp(x.id, y.id))
  return proposals.slice(0, Math.max(0, input.limit ?? DEFAULT_PROPOSAL_LIMIT))
}

/**
 * Whether consolidation would propose merging two names on their names alone: the name
 * evidence reaches `MERGE_THRESHOLD` and the names do not contrast. A merge this does not
 * allow rests on descriptions or neighbors too, which only a `full` connection may accept,
 * so a device and the sync server judge a `read_write` merge by this same rule.
 */
export function namesMayMerge(a: string, b: string): boolean {
  const sa = nameSignature(a)
  const sb = nameSignature(b)
  if (sa.key === '' || sb.key === '') return false
  if (sa.key === sb.key) return true
  const evidence = compareNames(sa, sb)
  let score = 1 - evidence.reduce((p, e) => p * (1 - e.weight), 1)
  if (namesContrast(sa, sb, evidence)) score *= CONTRAST_FACTOR
  return round(score) >= MERGE_THRESHOLD
}

/**
 * Evidence combines as independent hints (1 - Π(1 - weight)), then is damped when the two
 * entities carry different explicit types or contrasting names. Rounded for stable output.
 */
function scorePair(
  a: Entity,
  b: Entity,
  sa: NameSignature,
  sb: NameSignature,
  neighbors: Map<string, Set<string>>,
  vectors: Map<string, Map<string, number>>,
): { score: number; evidence: MergeEvidence[] } {
  const evidence = compareNames(sa, sb)
  const contrast = namesContrast(sa, sb, evidence)
  const sameType = typesAgree(a.type, b.type)
  if (sameType) {
    const cos = cosine(vectors.get(a.key)!, vectors.get(b.key)!)
    if (cos >= DESCRIPTION_MIN_SIMILARITY) {
      evidence.push({ signal: 'similar_description', detail: `descriptions are ${Math.round(cos * 100)}% similar`, weight: round(0.5 * cos * cos) })
    }
  }
  const shared = sharedNeighbors(a.key, b.key, neighbors)
  if (shared.count > 0) {
    // one shared neighbor is common among related things; several in a row are telling
    const weight = round(0.5 * shared.jaccard * (1 - 0.5 ** shared.count))
    evidence.push({ signal: 'shared_neighbors', detail: `${shared.count} shared neighbor${shared.count === 1 ? '' : 's'} (Jaccard ${shared.jaccard.toFixed(2)})`, weight })
  }
  let score = 1 - evidence.reduce((p, e) => p * (1 - e.weight), 1)
  if (!sameType) score *= TYPE_MISMATCH_FACTOR
  if (contrast) score *= CONTRAST_FACTOR
  evidence.sort((x, y) => y.weight - x.weight || cmp(x.signal, y.signal))
  return { score: round(Math.min(1, Math.max(0, score))), evidence }
}

function typesAgree(a: string, b: string): boolean {
  return a === b || a === DEFAULT_ENTITY_TYPE || b === DEFAULT_ENTITY_TYPE || a === '' || b === ''
}

function neighborSets(relationships: Iterable<Relationship>, entities: Map<string, Entity>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  const link = (x: string, y: string): void => {
    let s = out.get(x)
    if (!s) out.set(x, (s = new Set()))
    s.add(y)
  }
  for (const r of relationships) {
    if (r.source === r.target || !entities.has(r.source) || !entities.has(r.target)) continue
    link(r.source, r.target)
    link(r.target, r.source)
  }
  return out
}

/** Neighbors in common, not counting the pair itself (an edge between them is no evidence). */
function sharedNeighbors(a: string, b: string, neighbors: Map<string, Set<string>>): { count: number; jaccard: number } {
  const na = neighbors.get(a) ?? new Set<string>()
  const nb = neighbors.get(b) ?? new Set<string>()
  let count = 0
  let union = 0
  for (const x of na) if (x !== b) union++
  for (const x of nb) {
    if (x === a) continue
    if (na.has(x)) count++
    else union++
  }
  return { count, jaccard: union === 0 ? 0 : count / union }
}

function descriptionTerms(text: string): string[] {
  return words(text).filter((w) => !DESCRIPTION_STOP_WORDS.has(w))
}

/** Unit-length TF-IDF vectors of the descriptions; IDF over this store's entities. */
function descriptionVectors(entities: Map<string, Entity>): Map<string, Map<string, number>> {
  const terms = new Map<string, string[]>()
  const df = new Map<string, number>()
  for (const e of entities.values()) {
    const t = descriptionTerms(e.description)
    terms.set(e.key, t)
    for (const w of new Set(t)) df.set(w, (df.get(w) ?? 0) + 1)
  }
  const n = entities.size
  const out = new Map<string, Map<string, number>>()
  for (const [key, t] of terms) {
    const v = new Map<string, number>()
    for (const w of t) v.set(w, (v.get(w) ?? 0) + Math.log(1 + n / df.get(w)!))
    let norm = 0
    for (const x of v.values()) norm += x * x
    norm = Math.sqrt(norm)
    for (const [w, x] of v) v.set(w, x / norm)
    out.set(key, v)
  }
  return out
}

function cosine(a: Map<string, number>, b: Map<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let dot = 0
  for (const [w, x] of small) dot += x * (large.get(w) ?? 0)
  return dot
}

/**
 * Groups of same-type entities sharing one of their rarest description words. Near-identical
 * descriptions share their rarest words, so they meet in some block; common words do not block.
 */
function descriptionBlocks(entities: Map<string, Entity>, vectors: Map<string, Map<string, number>>): string[][] {
  const blocks = new Map<string, string[]>()
  for (const e of entities.values()) {
    // the largest TF-IDF weights are the rarest words
    const rare = [...vectors.get(e.key)!].sort((x, y) => y[1] - x[1] || cmp(x[0], y[0])).slice(0, DESCRIPTION_BLOCK_WORDS)
    for (const [w] of rare) {
      const k = `${e.type}\u0000${w}`
      const list = blocks.get(k)
      if (!list) blocks.set(k, [e.key])
      else if (list.length <= DESCRIPTION_BLOCK_MAX_DF) list.push(e.key)
    }
  }
  return [...blocks.values()].filter((b) => b.length >= 2 && b.length <= DESCRIPTION_BLOCK_MAX_DF)
}

/**
 * The suggested survivor of a merge: the entity with more edges (the name callers link to),
 * then more backing observations (the name written more often), then the more complete name
 * (more core words, then more words with titles, then more letters, then less punctuation),
 * then the smaller key. So
 * `IBM` wins over `International Business Machines` only when the graph uses it more.
 */
export function chooseCanonical(a: Entity, b: Entity): Entity {
  const sa = nameStats(a.name)
  const sb = nameStats(b.name)
  const order =
    b.degree - a.degree ||
    b.observations.length - a.observations.length ||
    sb.core - sa.core ||
    sb.tokens - sa.tokens ||
    sb.letters - sa.letters ||
    sa.marks - sb.marks ||
    cmp(a.key, b.key)
  return order <= 0 ? a : b
}

function nameStats(name: string): { core: number; tokens: number; letters: number; marks: number } {
  const s = nameSignature(name)
  const letters = (name.match(/[\p{L}\p{N}]/gu) ?? []).length
  // punctuation counts against a name: `Jane Doe` reads better than `Doe, Jane`
  const marks = (name.match(/[^\p{L}\p{N}\s]/gu) ?? []).length
  return { core: s.core.length, tokens: s.tokens.length, letters, marks }
}

const FNV_OFFSET = 0xcbf29ce484222325n
const FNV_PRIME = 0x100000001b3n
const MASK_64 = 0xffffffffffffffffn
const encoder = new TextEncoder()

/** FNV-1a, 64 bits, over UTF-8: stable on every device, collisions irrelevant at store sizes. */
export function fnv1a64(text: string): string {
  let h = FNV_OFFSET
  for (const byte of encoder.encode(text)) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK_64
  return h.toString(16).padStart(16, '0')
}

/** The proposal id of a pair of entity keys, independent of their order. */
export function pairId(a: string, b: string): string {
  const [x, y] = a <= b ? [a, b] : [b, a]
  return `merge:${fnv1a64(`${x}\u0000${y}`)}`
}

/**
 * Follows `key` through the alias map to its canonical key. Maps written by
 * `applyMergeToAliases` are flat, but maps joined from two devices may chain or even loop;
 * a loop resolves to its smallest key, the same on every device.
 */
export function resolveAlias(aliases: ReadonlyMap<string, string>, key: string): string {
  const seen: string[] = []
  const visited = new Set<string>()
  let cur = key
  while (aliases.has(cur) && !visited.has(cur)) {
    visited.add(cur)
    seen.push(cur)
    cur = aliases.get(cur)!
  }
  if (!visited.has(cur)) return cur
  // cur is on a loop: its members are the keys from cur's first visit on
  const loop = seen.slice(seen.indexOf(cur))
  return loop.reduce((m, k) => (k < m ? k : m))
}

/** A flat map (every variant points at a key that is not itself a variant), no self-maps. */
export function collapseAliases(aliases: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>()
  for (const k of [...aliases.keys()].sort()) {
    const c = resolveAlias(aliases, k)
    if (c !== k) out.set(k, c)
  }
  return out
}

/**
 * The alias map after merging `variant` into `canonical`: the variant and everything that
 * already pointed at it now point at the canonical key, and the map stays flat.
 * Merging a pair that is already merged the same way returns an unchanged copy. Merging into
 * a key that was itself merged away, or a variant already merged elsewhere, would undo or
 * override an earlier decision, so it fails with `conflict` instead of guessing.
 */
export function applyMergeToAliases(aliases: ReadonlyMap<string, string>, variant: string, canonical: string): Map<string, string> {
  const flat = collapseAliases(aliases)
  if (variant === canonical) {
    throw new MemoryError('invalid_request', `cannot merge "${variant}" into itself`, { variant, canonical })
  }
  const target = flat.get(canonical) ?? canonical
  const current = flat.get(variant)
  if (current === target) return flat
  if (target === variant) {
    throw new MemoryError('conflict', `"${canonical}" was already merged into "${variant}"; to reverse that merge, remove the alias first`, { variant, canonical })
  }
  if (current !== undefined) {
    throw new MemoryError('conflict', `"${variant}" was already merged into "${current}"; merge "${current}" instead`, { variant, canonical, mergedInto: current })
  }
  for (const [k, c] of flat) if (c === variant) flat.set(k, target)
  flat.set(variant, target)
  return flat
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
