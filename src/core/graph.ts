// The entity graph derived from observations and aliases, maintained incrementally:
// a change to one observation recomputes only the entities and edges it names.
//
// An entity lives while some observation describes it. An edge lives while some observation
// states it and both of its ends live; otherwise it waits, dormant, in its observations.
import { normalizeName, relationshipKey } from './normalize'
import type { Entity, Observation, RecalledRelationship, Relationship } from './types'

export type AliasMap = ReadonlyMap<string, string>

/** Names the derivation rules; change it when they change, so stored derived rows get rewritten. */
export const DERIVATION_RULES = 'cairn-derive@1'

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
  /** Aligned with the observation's relationships; null where a merge made a self-loop. */
  relKeys: Array<string | null>
}

const MAX_QUERIES = 8

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

  private contributionOf(o: Observation): Contribution {
    const authoredKeys = o.entities.map((e) => normalizeName(e.name))
    const entityKeys = authoredKeys.map((k) => this.resolve(k))
    const entities = new Set(entityKeys)
    const relationships = new Map<string, { source: string; type: string; target: string }>()
    const relKeys = o.relationships.map((r) => {
      const source = this.resolve(normalizeName(r.source))
      const target = this.resolve(normalizeName(r.target))
      // a merge can turn an edge into a self-loop: dropped, as consolidation requires
      if (source === target) return null
      const key = relationshipKey(source, r.type, target)
      relationships.set(key, { source, type: r.type, target })
      return key
    })
    return { entities, relationships, authoredKeys, entityKeys, relKeys }
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

  private recomputeEntity(key: string): void {
    const backers = this.entityBackers.get(key)
    if (!backers || backers.size === 0) {
      this.setEntity(key, undefined)
      return
    }
    // One pass finds the most recent backer (the winner), the most recent that names the entity
    // itself (the display name) and the backers with retrieval queries; only those few are
    // sorted. An entity named in most notes (the memory's owner) has thousands of backers.
    let latest: Observation | undefined
    let latestNaming: Observation | undefined
    const withQueries: Observation[] = []
    for (const slug of backers) {
      const o = this.observations.get(slug) as Observation
      const c = this.contributions.get(slug) as Contribution
      if (!latest || compareRecency(o, latest) < 0) latest = o
      let names = false
      let asks = false
      for (let i = 0; i < o.entities.length; i++) {
        if (c.entityKeys[i] !== key) continue
        if (c.authoredKeys[i] === key) names = true
        if (o.entities[i]!.queries.length) asks = true
      }
      if (names && (!latestNaming || compareRecency(o, latestNaming) < 0)) latestNaming = o
      if (asks) withQueries.push(o)
    }
    const firstOf = (o: Observation | undefined, authored: boolean) => {
      if (!o) return undefined
      const c = this.contributions.get(o.slug) as Contribution
      const i = o.entities.findIndex((_e, j) => c.entityKeys[j] === key && (!authored || c.authoredKeys[j] === key))
      return o.entities[i]
    }
    const winner = firstOf(latest, false)
    const display = firstOf(latestNaming, true)?.name
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
    const w = winner as { name: string; type: string; description: string }
    const prev = this.entities.get(key)
    this.setEntity(key, {
      key,
      name: display ?? w.name,
      type: w.type,
      description: w.description,
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

function authoredKeysOf(o: Observation): Set<string> {
  const keys = new Set<string>()
  for (const e of o.entities) keys.add(normalizeName(e.name))
  for (const r of o.relationships) {
    keys.add(normalizeName(r.source))
    keys.add(normalizeName(r.target))
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
