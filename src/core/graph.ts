// The entity graph derived from observations and aliases, maintained incrementally:
// a change to one observation recomputes only the entities and edges it names.
//
// An entity lives while some observation describes it. An edge lives while some observation
// states it and both of its ends live; otherwise it waits, dormant, in its observations.
import { legacyNameKey, normalizeName, relationshipKey, words } from './normalize'
import type { Entity, Observation, RecalledRelationship, Relationship } from './types'

export type AliasMap = ReadonlyMap<string, string>

/** Names the derivation rules; change it when they change, so stored derived rows get rewritten. */
export const DERIVATION_RULES = 'cairn-derive@2'

export interface GraphDelta {
  upsertedEntities: Entity[]
  removedEntities: string[]
  upsertedRelationships: Relationship[]
  removedRelationships: string[]
}

interface Contribution {
  entities: Set<string>
  relationships: Map<string, { source: string; type: string; target: string }>
  /** Aligned with the observation's entities: the authored key and the key after aliases. */
  authoredKeys: string[]
  entityKeys: string[]
  /** Aligned with the observation's entities: the description's words, '' where none was given. */
  descriptionKeys: string[]
  /** Aligned with the observation's relationships; null where a merge made a self-loop. */
  relKeys: Array<string | null>
}

const MAX_QUERIES = 8
/** Descriptions besides the displayed one that an entity keeps for matching. */
const MAX_OTHER_DESCRIPTIONS = 7

export function resolveKey(aliases: AliasMap, key: string): string {
  return aliases.get(key) ?? key
}

/** Deterministic winner order: the latest observedAt, then updatedAt, then slug. */
export function compareRecency(a: Observation, b: Observation): number {
  if (a.observedAt !== b.observedAt) return a.observedAt > b.observedAt ? -1 : 1
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1
  return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}

export class Graph {
  readonly entities = new Map<string, Entity>()
  readonly relationships = new Map<string, Relationship>()
  private readonly observations = new Map<string, Observation>()
  private aliases: AliasMap = new Map()
  private readonly contributions = new Map<string, Contribution>()
  private readonly entityBackers = new Map<string, Set<string>>()
  private readonly edgeBackers = new Map<string, Set<string>>()
  /** entity key -> keys of every stated edge touching it, live or dormant */
  private readonly edgesByEnd = new Map<string, Set<string>>()
  /** authored (pre-alias) key -> observations naming it, so alias changes find what they touch */
  private readonly authored = new Map<string, Set<string>>()
  /** While previewing: the value each entity and edge had before it was first replaced. */
  private previewed: { entities: Map<string, Entity | undefined>; relationships: Map<string, Relationship | undefined> } | null = null

  static derive(observations: Iterable<Observation>, aliases: AliasMap = new Map()): Graph {
    const g = new Graph()
    g.aliases = new Map(aliases)
    // attach everything, then settle once: each entity is computed once, not once per backer
    const touched = { entities: new Set<string>(), edges: new Set<string>() }
    for (const o of observations) {
      g.detach(o.slug, touched)
      g.attach(o, touched)
    }
    g.settle(touched)
    return g
  }

  getObservation(slug: string): Observation | undefined {
    return this.observations.get(slug)
  }

  allObservations(): IterableIterator<Observation> {
    return this.observations.values()
  }

  get observationCount(): number {
    return this.observations.size
  }

  aliasMap(): AliasMap {
    return this.aliases
  }

  resolve(key: string): string {
    return resolveKey(this.aliases, key)
  }

  /** Put (or with `next` undefined, remove) one observation; returns what changed in the graph. */
  apply(slug: string, next: Observation | undefined): GraphDelta {
    const touched = { entities: new Set<string>(), edges: new Set<string>() }
    this.detach(slug, touched)
    if (next) this.attach(next, touched)
    return this.settle(touched)
  }

  /**
   * What `apply(slug, next)` would change, leaving the graph as it was: the change is computed
   * once, then the replaced entities and edges are put back as they were, without recomputing.
   * Pass the delta to `applyPreviewed` to make it real, also without recomputing.
   */
  preview(slug: string, next: Observation | undefined): GraphDelta {
    const prev = this.observations.get(slug)
    const log = { entities: new Map<string, Entity | undefined>(), relationships: new Map<string, Relationship | undefined>() }
    this.previewed = log
    let delta: GraphDelta
    try {
      delta = this.apply(slug, next)
    } finally {
      this.previewed = null
      this.rebook(slug, prev)
      for (const [k, e] of log.entities) e ? this.entities.set(k, e) : this.entities.delete(k)
      for (const [k, r] of log.relationships) r ? this.relationships.set(k, r) : this.relationships.delete(k)
    }
    return delta
  }

  /** Applies a change `preview` computed, while nothing else changed the graph in between. */
  applyPreviewed(slug: string, next: Observation | undefined, delta: GraphDelta): void {
    this.rebook(slug, next)
    for (const k of delta.removedEntities) this.entities.delete(k)
    for (const e of delta.upsertedEntities) this.entities.set(e.key, e)
    for (const k of delta.removedRelationships) this.relationships.delete(k)
    for (const r of delta.upsertedRelationships) this.relationships.set(r.key, r)
  }

  /** Re-files an observation's backing (which entities and edges it supports) without recomputing them. */
  private rebook(slug: string, o: Observation | undefined): void {
    const ignored = { entities: new Set<string>(), edges: new Set<string>() }
    this.detach(slug, ignored)
    if (o) this.attach(o, ignored)
  }

  private setEntity(key: string, e: Entity | undefined): void {
    if (this.previewed && !this.previewed.entities.has(key)) this.previewed.entities.set(key, this.entities.get(key))
    if (e) this.entities.set(key, e)
    else this.entities.delete(key)
  }

  private setRelationship(key: string, r: Relationship | undefined): void {
    if (this.previewed && !this.previewed.relationships.has(key)) this.previewed.relationships.set(key, this.relationships.get(key))
    if (r) this.relationships.set(key, r)
    else this.relationships.delete(key)
  }

  /** Replace the alias map; re-derives only observations that name a variant whose mapping changed. */
  setAliases(aliases: AliasMap): GraphDelta {
    const changed = new Set<string>()
    for (const [v, c] of aliases) if (this.aliases.get(v) !== c) changed.add(v)
    for (const [v] of this.aliases) if (!aliases.has(v)) changed.add(v)
    this.aliases = new Map(aliases)
    const slugs = new Set<string>()
    for (const v of changed) for (const s of this.authored.get(v) ?? []) slugs.add(s)
    const touched = { entities: new Set<string>(), edges: new Set<string>() }
    for (const s of [...slugs].sort()) {
      const o = this.observations.get(s)
      this.detach(s, touched)
      if (o) this.attach(o, touched)
    }
    return this.settle(touched)
  }

  /** An authored name's key after aliases; a merge recorded under the name's older key still applies. */
  resolveName(name: string): string {
    const key = normalizeName(name)
    const alias = this.aliases.get(key)
    if (alias !== undefined) return alias
    const legacy = legacyNameKey(name)
    return legacy !== key ? (this.aliases.get(legacy) ?? key) : key
  }

  private contributionOf(o: Observation): Contribution {
    const authoredKeys = o.entities.map((e) => normalizeName(e.name))
    const entityKeys = o.entities.map((e) => this.resolveName(e.name))
    const entities = new Set(entityKeys)
    const relationships = new Map<string, { source: string; type: string; target: string }>()
    const relKeys = o.relationships.map((r) => {
      const source = this.resolveName(r.source)
      const target = this.resolveName(r.target)
      // a merge can turn an edge into a self-loop: dropped, as consolidation requires
      if (source === target) return null
      const key = relationshipKey(source, r.type, target)
      relationships.set(key, { source, type: r.type, target })
      return key
    })
    const descriptionKeys = o.entities.map((e) => (e.description ? words(e.description).join(' ') || e.description : ''))
    return { entities, relationships, authoredKeys, entityKeys, relKeys, descriptionKeys }
  }

  private detach(slug: string, touched: { entities: Set<string>; edges: Set<string> }): void {
    const prev = this.observations.get(slug)
    const c = this.contributions.get(slug)
    if (!prev || !c) return
    for (const k of c.entities) {
      removeFrom(this.entityBackers, k, slug)
      touched.entities.add(k)
    }
    for (const [k, r] of c.relationships) {
      if (removeFrom(this.edgeBackers, k, slug)) {
        removeFrom(this.edgesByEnd, r.source, k)
        removeFrom(this.edgesByEnd, r.target, k)
      }
      touched.edges.add(k)
    }
    for (const k of authoredKeysOf(prev)) removeFrom(this.authored, k, slug)
    this.observations.delete(slug)
    this.contributions.delete(slug)
  }

  private attach(o: Observation, touched: { entities: Set<string>; edges: Set<string> }): void {
    const c = this.contributionOf(o)
    this.observations.set(o.slug, o)
    this.contributions.set(o.slug, c)
    for (const k of authoredKeysOf(o)) addTo(this.authored, k, o.slug)
    for (const k of c.entities) {
      addTo(this.entityBackers, k, o.slug)
      touched.entities.add(k)
    }
    for (const [k, r] of c.relationships) {
      addTo(this.edgeBackers, k, o.slug)
      addTo(this.edgesByEnd, r.source, k)
      addTo(this.edgesByEnd, r.target, k)
      touched.edges.add(k)
    }
  }

  /** Recompute every touched entity, then every edge whose backing or ends changed, then degrees. */
  private settle(touched: { entities: Set<string>; edges: Set<string> }): GraphDelta {
    const delta: GraphDelta = { upsertedEntities: [], removedEntities: [], upsertedRelationships: [], removedRelationships: [] }
    const lived = new Map<string, boolean>()
    for (const k of touched.entities) {
      lived.set(k, this.entities.has(k))
      this.recomputeEntity(k)
    }
    const edges = new Set(touched.edges)
    for (const [k, was] of lived) {
      if (was !== this.entities.has(k)) for (const e of this.edgesByEnd.get(k) ?? []) edges.add(e)
    }
    // an entity's degree moves by the edges that came alive or died, so a well-connected entity
    // is not recounted edge by edge on every write
    const degreeChanged = new Map<string, number>()
    const bump = (key: string, by: number) => degreeChanged.set(key, (degreeChanged.get(key) ?? 0) + by)
    for (const k of edges) {
      const before = this.relationships.get(k)
      const after = this.recomputeEdge(k)
      if (!before && !after) continue
      if (before && !after) delta.removedRelationships.push(k)
      if (after) delta.upsertedRelationships.push(after)
      if (!before !== !after) {
        const r = (after ?? before) as Relationship
        bump(r.source, after ? 1 : -1)
        bump(r.target, after ? 1 : -1)
      }
    }
    for (const [k, by] of degreeChanged) {
      const e = this.entities.get(k)
      // replaced, not mutated: a returned delta must not change when the graph moves on
      if (e && by !== 0) this.setEntity(k, { ...e, degree: e.degree + by })
    }
    const upserted = new Set([...touched.entities, ...degreeChanged.keys()])
    for (const k of [...upserted].sort()) {
      const e = this.entities.get(k)
      if (e) delta.upsertedEntities.push(e)
      else if (lived.get(k)) delta.removedEntities.push(k)
    }
    delta.removedRelationships.sort()
    delta.upsertedRelationships.sort((a, b) => (a.key < b.key ? -1 : 1))
    return delta
  }

  /**
   * The description rule, the same on every device: an entity lives while some note describes
   * it. It shows the description the most of its notes give (case, spacing and punctuation
   * aside); ties go to the longer one, then to the one given first. So a passing mention does
   * not replace a summary, and a note may name the entity without describing it. The other
   * descriptions are kept for matching. Its type is the one given with the shown description;
   * its display name, the latest note's spelling of its own key.
   */
  private recomputeEntity(key: string): void {
    const backers = this.entityBackers.get(key)
    if (!backers || backers.size === 0) {
      this.setEntity(key, undefined)
      return
    }
    // One pass over the backers; an entity named in most notes (the memory's owner) has thousands.
    let latestNaming: Observation | undefined
    const withQueries: Observation[] = []
    const given = new Map<string, { count: number; latest: Observation; first: Observation; at: number }>()
    for (const slug of backers) {
      const o = this.observations.get(slug) as Observation
      const c = this.contributions.get(slug) as Contribution
      let names = false
      let asks = false
      for (let i = 0; i < o.entities.length; i++) {
        if (c.entityKeys[i] !== key) continue
        if (c.authoredKeys[i] === key) names = true
        if (o.entities[i]!.queries.length) asks = true
        const d = c.descriptionKeys[i]!
        if (!d) continue
        const g = given.get(d)
        if (!g) given.set(d, { count: 1, latest: o, first: o, at: i })
        else {
          g.count++
          if (compareRecency(o, g.latest) < 0) {
            g.latest = o
            g.at = i
          }
          if (compareRecency(o, g.first) > 0) g.first = o
        }
      }
      if (names && (!latestNaming || compareRecency(o, latestNaming) < 0)) latestNaming = o
      if (asks) withQueries.push(o)
    }
    if (given.size === 0) {
      // only named, never described: the entity waits, dormant, for a note that describes it
      this.setEntity(key, undefined)
      return
    }
    const ranked = [...given.values()].map((g) => ({ ...g, text: g.latest.entities[g.at]!.description })).sort(
      (a, b) => b.count - a.count || b.text.length - a.text.length || compareRecency(b.first, a.first) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
    )
    const shown = ranked[0]!
    const shownEntity = shown.latest.entities[shown.at]!
    let display: string | undefined
    if (latestNaming) {
      const c = this.contributions.get(latestNaming.slug) as Contribution
      display = latestNaming.entities.find((_e, j) => c.entityKeys[j] === key && c.authoredKeys[j] === key)?.name
    }
    const queries: string[] = []
    const seenQ = new Set<string>()
    for (const o of withQueries.sort(compareRecency)) {
      const c = this.contributions.get(o.slug) as Contribution
      for (let i = 0; i < o.entities.length && queries.length < MAX_QUERIES; i++) {
        if (c.entityKeys[i] !== key) continue
        for (const q of o.entities[i]!.queries) {
          const nq = normalizeName(q)
          if (queries.length < MAX_QUERIES && !seenQ.has(nq)) {
            seenQ.add(nq)
            queries.push(q)
          }
        }
      }
    }
    const prev = this.entities.get(key)
    this.setEntity(key, {
      key,
      name: display ?? shownEntity.name,
      type: shownEntity.type || 'thing',
      description: shown.text,
      descriptions: ranked.slice(1, 1 + MAX_OTHER_DESCRIPTIONS).map((g) => g.text),
      queries,
      degree: prev?.degree ?? this.degreeOf(key),
      observations: [...backers].sort(),
    })
  }

  private recomputeEdge(key: string): Relationship | undefined {
    const backers = this.edgeBackers.get(key)
    const first = backers && backers.size ? this.contributions.get([...backers][0] as string)?.relationships.get(key) : undefined
    if (!backers || !first || !this.entities.has(first.source) || !this.entities.has(first.target)) {
      this.setRelationship(key, undefined)
      return undefined
    }
    const obs = [...backers].map((s) => this.observations.get(s) as Observation).sort(compareRecency)
    let description = ''
    let weight = 0
    for (const o of obs) {
      const c = this.contributions.get(o.slug) as Contribution
      for (let i = 0; i < o.relationships.length; i++) {
        if (c.relKeys[i] !== key) continue
        const r = o.relationships[i]!
        weight += r.weight
        if (!description && r.description) description = r.description
      }
    }
    const rel: Relationship = { key, source: first.source, type: first.type, target: first.target, description, weight, observations: [...backers].sort() }
    this.setRelationship(key, rel)
    return rel
  }

  private degreeOf(key: string): number {
    let n = 0
    for (const k of this.edgesByEnd.get(key) ?? []) if (this.relationships.has(k)) n++
    return n
  }

  /** Keys (after aliases) of the live entities an observation names. */
  entitiesOf(slug: string): string[] {
    const c = this.contributions.get(slug)
    if (!c) return []
    const out: string[] = []
    for (const k of c.entities) if (this.entities.has(k)) out.push(k)
    return out
  }

  /** Live edges touching an entity, heaviest first (ties by key). */
  edgesOf(key: string): Relationship[] {
    const out: Relationship[] = []
    for (const k of this.edgesByEnd.get(key) ?? []) {
      const r = this.relationships.get(k)
      if (r) out.push(r)
    }
    return out.sort((a, b) => b.weight - a.weight || (a.key < b.key ? -1 : 1))
  }

  /** An edge with display names, as responses show it. */
  present(r: Relationship): RecalledRelationship {
    return {
      source: this.entities.get(r.source)?.name ?? r.source,
      type: r.type,
      target: this.entities.get(r.target)?.name ?? r.target,
      description: r.description,
      weight: r.weight,
    }
  }
}

/** Every key an alias may be recorded under for the names an observation authors (older keys too). */
function authoredKeysOf(o: Observation): Set<string> {
  const keys = new Set<string>()
  const add = (name: string) => {
    keys.add(normalizeName(name))
    keys.add(legacyNameKey(name))
  }
  for (const e of o.entities) add(e.name)
  for (const r of o.relationships) {
    add(r.source)
    add(r.target)
  }
  return keys
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  let s = map.get(key)
  if (!s) map.set(key, (s = new Set()))
  s.add(value)
}

/** Returns true when the key's set became empty and was dropped. */
function removeFrom(map: Map<string, Set<string>>, key: string, value: string): boolean {
  const s = map.get(key)
  if (!s) return false
  s.delete(value)
  if (s.size === 0) {
    map.delete(key)
    return true
  }
  return false
}

/** A canonical, comparable picture of a graph: for tests and crash-recovery checks. */
export function graphFingerprint(g: Graph): string {
  const entities = [...g.entities.values()].sort((a, b) => (a.key < b.key ? -1 : 1))
  const rels = [...g.relationships.values()].sort((a, b) => (a.key < b.key ? -1 : 1))
  return JSON.stringify({ entities, rels })
}
