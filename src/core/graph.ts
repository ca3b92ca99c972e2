// The entity graph derived from observations and aliases, maintained incrementally:
// a change to one observation recomputes only the entities and edges it names.
//
// An entity lives while some observation describes it. An edge lives while some observation
// states it and both of its ends live; otherwise it waits, dormant, in its observations.
import { DEFAULT_ENTITY_TYPE } from './contract'
import { legacyNameKey, normalizeName, normalizeType, relationshipKey, words } from './normalize'
import { NoteInStorage, NoteShelf } from './note-shelf'
import { EdgeEnds, LiveEdges, SavedEdges } from './saved-edges'
import type { Entity, Observation, RecalledRelationship, Relationship } from './types'

export type AliasMap = ReadonlyMap<string, string>

/** Names the derivation rules; change it when they change, so stored derived rows get rewritten. */
export const DERIVATION_RULES = 'cairn-derive@4'

export interface GraphDelta {
  upsertedEntities: Entity[]
  removedEntities: string[]
  upsertedRelationships: Relationship[]
  removedRelationships: string[]
  /**
   * Notes that started or stopped backing an entity or a stated edge (live or dormant), net of
   * what cancelled out. Storage keeps backing apart from the rows, so a write to an entity named
   * in thousands of notes stores the one pair that changed, not the whole list.
   */
  backing: BackingChange[]
}

export interface BackingChange {
  of: 'entity' | 'relationship'
  key: string
  slug: string
  /** True when `slug` now backs `key`, false when it stopped. */
  backs: boolean
}

/** Pair changes in order, netted: a pair added then removed (or the reverse) is no change. */
class BackingLog {
  private readonly changes = new Map<string, BackingChange>()

  /** A log that keeps nothing, for a derivation whose delta nobody reads. */
  constructor(private readonly keeps = true) {}

  record(of: BackingChange['of'], key: string, slug: string, backs: boolean): void {
    if (!this.keeps) return
    const id = `${of}\u0001${key}\u0001${slug}`
    const earlier = this.changes.get(id)
    // every recorded change flips the pair, so a second flip restores where it started
    if (earlier) this.changes.delete(id)
    else this.changes.set(id, { of, key, slug, backs })
  }

  addAll(changes: Iterable<BackingChange>): void {
    for (const c of changes) this.record(c.of, c.key, c.slug, c.backs)
  }

  list(): BackingChange[] {
    return [...this.changes.values()]
  }
}

/** One netted list of backing changes for deltas applied one after another. */
export function mergeBacking(deltas: readonly GraphDelta[]): BackingChange[] {
  const log = new BackingLog()
  for (const d of deltas) log.addAll(d.backing)
  return log.list()
}

interface Touched {
  entities: Set<string>
  edges: Set<string>
  backing: BackingLog
}

function touchedSet(keepBacking = true): Touched {
  return { entities: new Set(), edges: new Set(), backing: new BackingLog(keepBacking) }
}

export interface Contribution {
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
/** An entity with this many live edges keeps its heaviest between changes (see `topEdgesOf`), up to this many entities. */
const KEEP_TOP_EDGES_FROM = 256
const KEPT_TOP_EDGES = 64
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

/** What a reader of a memory's committed graph may see: no change, no derivation state. */
export interface GraphView {
  readonly entities: ReadonlyMap<string, Entity>
  readonly relationships: ReadonlyMap<string, Relationship>
  readonly observationCount: number
  allObservations(): IterableIterator<Observation>
  getObservation(slug: string): Observation | undefined
  aliasMap(): AliasMap
  /** A normalized key after merges. */
  resolve(key: string): string
}

/** Which entities each note of a saved state backed, by the note's place in the save (see store/graph-columns). */
export interface SavedBacking {
  keysAt(place: number): string[]
}

/**
 * What a saved state knew of the keys that were not live: each entity named but never
 * described, each stated edge with an end missing, and the notes backing them. With the live
 * rows, which list their notes, it tells every note that backs a key, so that a change after an
 * open files only the notes its keys need (see `Graph.fileFor`).
 */
export interface DormantBacking {
  entities: ReadonlyMap<string, readonly string[]>
  edges: ReadonlyMap<string, DormantEdge>
}

export interface DormantEdge {
  source: string
  type: string
  target: string
  observations: readonly string[]
}

export class Graph implements GraphView {
  private entityMap = new Map<string, Entity>()
  private relationshipMap = new LiveEdges()
  /** The heaviest edges of the entities with many (see `topEdgesOf`), each with the edge versions it was found at. */
  private topEdges = new Map<string, { cap: number; live: LiveEdges; ends: EdgeEnds; version: number; edges: Relationship[]; total: number }>()

  /** The live entities by key: read-only, changed only by the graph's own methods. */
  get entities(): ReadonlyMap<string, Entity> {
    return this.entityMap
  }

  /** The live relationships by key: read-only, changed only by the graph's own methods. */
  get relationships(): ReadonlyMap<string, Relationship> {
    return this.relationshipMap
  }
  private observations = new NoteShelf()
  private aliases: AliasMap = new Map()
  private contributions = new Map<string, Contribution>()
  private entityBackers = new Map<string, Backers>()
  /** entity key -> what decides its row among its backers (see `summaryOf`) */
  private summaries = new Map<string, Summary>()
  private edgeBackers = new Map<string, Backers>()
  /** entity key -> keys of every stated edge touching it, live or dormant */
  private edgesByEnd = new EdgeEnds()
  /** authored (pre-alias) key -> observations naming it, so alias changes find what they touch */
  private authored = new Map<string, Set<string>>()
  /** While previewing: what each entity, edge, summary and observation was before it first changed. */
  private previewed: PreviewLog | null = null

  /**
   * Observations not yet filed into the indexes a change needs (which notes back what, by
   * end, by authored name), by slug, from `unfiledAt` on. Only a graph made by `fromRows` has any.
   */
  private unfiled: string[] = []
  private unfiledAt = 0
  /**
   * Contributions of unfiled notes that reads needed before their turn (see `entitiesOf`), kept
   * for their filing. Valid until the aliases change, which files the rest first.
   */
  private readAhead = new Map<string, Contribution>()
  /**
   * Which entities each note backed when the open state was saved, by the note's place in the
   * save: what `entitiesOf` answers for a note not read since the open, its text in or not.
   * Valid, like `readAhead`, for a note not filed since.
   */
  private savedBacking: SavedBacking | undefined
  /**
   * The keys that were not live at the save, with their notes; while it is known, a change files
   * only what it touches. A key once filed whole is in `filedEntities` or `filedEdges`: its
   * backers are then all filed, while every other key is backed by the notes the save says
   * (the live row's list, or this). Changes come only through filed keys.
   */
  private dormant: DormantBacking | undefined
  /** dormant edges by end, made from `dormant` when first needed */
  private dormantByEnd: Map<string, string[]> | undefined
  private filedEntities = new Set<string>()
  private filedEdges = new Set<string>()
  /** The saved edges under `relationshipMap` and `edgesByEnd` of a graph from rows: their names are mapped in idle time. */
  private savedEdges: SavedEdges | undefined

  static derive(observations: Iterable<Observation>, aliases: AliasMap = new Map()): Graph {
    const g = new Graph()
    g.aliases = new Map(aliases)
    // attach everything, then settle once: each entity is computed once, not once per backer
    const touched = touchedSet(false)
    for (const o of observations) {
      g.detach(o.slug, touched)
      g.attach(o, touched)
    }
    g.settle(touched)
    return g
  }

  /**
   * A graph from rows stored by a derivation under the same rules, without deriving: it reads
   * at once, and files its observations into the indexes that changes need either a slice at a
   * time (`fileSome`) or all at once before the first change.
   */
  static fromRows(observations: Iterable<Observation> | NoteShelf, aliases: AliasMap, entities: Iterable<Entity>, relationships: Iterable<Relationship> | SavedEdges, savedBacking?: SavedBacking, dormant?: DormantBacking): Graph {
    const g = new Graph()
    g.savedBacking = savedBacking
    g.dormant = dormant
    g.aliases = new Map(aliases)
    // a shelf of saved texts is taken as it is: each note is parsed when first read or filed
    g.observations = observations instanceof NoteShelf ? observations : NoteShelf.of(observations)
    for (const e of entities) g.entityMap.set(e.key, e)
    // live edges are enough to read; filing adds the dormant ones
    if (relationships instanceof SavedEdges) {
      g.savedEdges = relationships
      g.relationshipMap = new LiveEdges(relationships)
      g.edgesByEnd = new EdgeEnds(relationships)
    } else {
      for (const r of relationships) {
        g.relationshipMap.set(r.key, r)
        g.edgesByEnd.add(r.source, r.key)
        g.edgesByEnd.add(r.target, r.key)
      }
    }
    g.unfiled = [...g.observations.keys()]
    return g
  }

  /** Maps up to `count` more of the saved edges' names (see `SavedEdges.mapNames`), for idle time after an open; true once all are. */
  mapKeys(count: number): boolean {
    return this.savedEdges?.mapNames(count) ?? true
  }

  /** Files up to `count` more observations into the change indexes; true once all are. */
  fileSome(count: number): boolean {
    const ignored = touchedSet(false)
    const end = Math.min(this.unfiledAt + count, this.unfiled.length)
    // every change files the rest first, so each slug still names a held note
    for (; this.unfiledAt < end; this.unfiledAt++) {
      const slug = this.unfiled[this.unfiledAt]!
      // a change may have filed it already, or deleted it
      if (this.contributions.has(slug)) continue
      const o = this.observations.get(slug)
      if (o) this.attach(o, ignored, this.readAhead.get(slug))
    }
    if (this.unfiledAt < this.unfiled.length) return false
    this.unfiled = []
    this.unfiledAt = 0
    this.readAhead.clear()
    this.savedBacking = undefined
    this.dormant = this.dormantByEnd = undefined
    this.filedEntities.clear()
    this.filedEdges.clear()
    return true
  }

  /**
   * Files what a change of the notes `changes` (slug and what it becomes, undefined for a
   * deletion) touches: every note backing an entity or edge either version names, or an edge
   * touching such an entity (whose life may follow the entity's). Without the save's dormant
   * keys it files everything. Throws `NoteInStorage`, having filed nothing, when notes it needs
   * are in storage: the caller reads them and asks again.
   */
  private fileFor(changes: Iterable<readonly [string, Observation | undefined]>): void {
    if (!this.unfiled.length) return
    if (!this.dormant) return this.fileAll()
    const entities = new Set<string>()
    const edges = new Set<string>()
    const notes = new Set<string>()
    const take = (c: Contribution) => {
      for (const k of c.entities) entities.add(k)
      for (const k of c.relationships.keys()) edges.add(k)
    }
    for (const [slug, next] of changes) {
      if (this.observations.has(slug)) {
        let c = this.contributions.get(slug) ?? this.readAhead.get(slug)
        if (!c) this.readAhead.set(slug, (c = this.contributionOf(this.observations.get(slug)!)))
        take(c)
        notes.add(slug)
      }
      if (next) take(this.contributionOf(next))
    }
    for (const k of entities) for (const e of this.edgesTouching(k)) edges.add(e)
    for (const k of entities) if (!this.filedEntities.has(k)) for (const s of this.entityMap.get(k)?.observations ?? this.dormant.entities.get(k) ?? []) notes.add(s)
    for (const k of edges) if (!this.filedEdges.has(k)) for (const s of this.relationshipMap.get(k)?.observations ?? this.dormant.edges.get(k)?.observations ?? []) notes.add(s)
    const unfiled: string[] = []
    for (const s of notes) if (!this.contributions.has(s)) unfiled.push(s)
    this.requireNotes(unfiled)
    const ignored = touchedSet(false)
    for (const s of unfiled) this.attach(this.observations.get(s)!, ignored, this.readAhead.get(s))
    for (const k of entities) this.filedEntities.add(k)
    for (const k of edges) this.filedEdges.add(k)
  }

  /** Whether a change files only what it touches; otherwise, every note first (an open of a save without the dormant keys). */
  get filesByChange(): boolean {
    return !this.unfiled.length || this.dormant !== undefined
  }

  /** Every stated edge touching an entity, live or dormant, filed or not (while `dormant` is known). */
  private edgesTouching(key: string): string[] {
    if (!this.dormantByEnd) {
      this.dormantByEnd = new Map()
      for (const [k, r] of this.dormant!.edges) {
        for (const end of [r.source, r.target]) {
          const list = this.dormantByEnd.get(end)
          if (list) list.push(k)
          else this.dormantByEnd.set(end, [k])
        }
      }
    }
    return [...this.edgesByEnd.of(key), ...(this.dormantByEnd.get(key) ?? [])]
  }

  /**
   * The keys not live now with the notes backing them: for a save, which keeps them so that the
   * next open files only what a change touches. Keys not filed since the open are as the open
   * found them.
   */
  dormantBacking(): DormantBacking {
    const entities = new Map<string, readonly string[]>()
    const edges = new Map<string, DormantEdge>()
    if (this.unfiled.length && this.dormant) {
      for (const [k, list] of this.dormant.entities) if (!this.filedEntities.has(k)) entities.set(k, list)
      for (const [k, r] of this.dormant.edges) if (!this.filedEdges.has(k)) edges.set(k, r)
    } else this.fileAll()
    const filedAll = !this.unfiled.length
    for (const [k, b] of this.entityBackers) {
      if ((filedAll || this.filedEntities.has(k)) && !this.entityMap.has(k)) entities.set(k, b.sorted.slice())
    }
    for (const [k, b] of this.edgeBackers) {
      if ((!filedAll && !this.filedEdges.has(k)) || this.relationshipMap.has(k)) continue
      const r = this.contributions.get(b.sorted[0]!)!.relationships.get(k)!
      edges.set(k, { ...r, observations: b.sorted.slice() })
    }
    return { entities, edges }
  }

  private fileAll(): void {
    if (this.unfiled.length) this.fileSome(Infinity)
  }

  /** Whether a note of this slug is held, its text read or not. */
  hasObservation(slug: string): boolean {
    return this.observations.has(slug)
  }

  getObservation(slug: string): Observation | undefined {
    return this.observations.get(slug)
  }

  allObservations(): IterableIterator<Observation> {
    return this.observations.values()
  }

  /** Each observation as JSON text, for saving: notes not read since the open give their saved text. */
  observationTexts(): IterableIterator<[string, string, number]> {
    return this.observations.texts()
  }

  /** When a note was observed: known without its text when the save gave it, else read from the text (which may throw `NoteInStorage`). */
  observedAtOf(slug: string): string | undefined {
    return this.observations.observedAt(slug)
  }

  /** `observedAtOf` in ms (0 when it reads as no time): what ranking by time compares. */
  observedMsOf(slug: string): number {
    return this.observations.observedMs(slug)
  }

  get observationCount(): number {
    return this.observations.size
  }

  /** How many notes an open left in storage: reading one throws `NoteInStorage` (see note-shelf). */
  get notesInStorage(): number {
    return this.observations.inStorageCount
  }

  /** Those of `slugs` still in storage. */
  notesInStorageAmong(slugs: Iterable<string>): string[] {
    return this.observations.inStorageAmong(slugs)
  }

  /** Throws `NoteInStorage` naming every one of `slugs` still in storage: a reader about to read them all asks for them at once. */
  requireNotes(slugs: Iterable<string>): void {
    const away = this.observations.inStorageAmong(slugs)
    if (away.length) throw new NoteInStorage(away)
  }

  /** As `requireNotes`, for reading when the notes were observed: only notes whose saved time is unknown are asked for. */
  requireTimes(slugs: Iterable<string>): void {
    const away = this.observations.untimedAmong(slugs)
    if (away.length) throw new NoteInStorage(away)
  }

  /** Takes in notes read from their rows; a note changed since the open keeps its change. */
  takeInNotes(notes: Iterable<Observation>): void {
    for (const o of notes) this.observations.takeIn(o.slug, o)
  }

  /** Takes in a part of the texts of a save: the notes `slugs` from place `from`, cut by `ends`. */
  takeInNotePart(from: number, slugs: readonly string[], text: string, ends: ArrayLike<number>): void {
    this.observations.takeInPart(from, slugs, text, ends)
  }

  aliasMap(): AliasMap {
    return this.aliases
  }

  resolve(key: string): string {
    return resolveKey(this.aliases, key)
  }

  /** Put (or with `next` undefined, remove) one observation; returns what changed in the graph. */
  apply(slug: string, next: Observation | undefined): GraphDelta {
    this.fileFor([[slug, next]])
    const touched = touchedSet()
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
    this.fileFor([[slug, next]])
    const prev = this.observations.get(slug)
    // summaries are saved above, only those the change touches
    const log = previewLog(false)
    // putting `prev` back would drop `next` from the summaries it just won and force a rescan
    // of a busy entity on the following write, so the summaries it touches are put back as they
    // were (made now if missing, so that `applyPreviewed` has one to count `next` into)
    const saved = new Map<string, Summary | undefined>()
    for (const k of [...(this.contributions.get(slug)?.entities ?? []), ...(next ? this.contributionOf(next).entities : [])]) {
      const backing = this.entityBackers.get(k)
      const s = backing && this.summaryOf(k, backing)
      saved.set(k, s && copySummary(s))
    }
    this.previewed = log
    let delta: GraphDelta
    try {
      delta = this.apply(slug, next)
    } finally {
      this.previewed = null
      this.rebook(slug, prev)
      for (const [k, summary] of saved) summary ? this.summaries.set(k, summary) : this.summaries.delete(k)
      for (const [k, e] of log.entities) e ? this.entityMap.set(k, e) : this.entityMap.delete(k)
      for (const [k, r] of log.relationships) r ? this.relationshipMap.set(k, r) : this.relationshipMap.delete(k)
    }
    return delta
  }

  /** Applies a change `preview` computed, while nothing else changed the graph in between. */
  applyPreviewed(slug: string, next: Observation | undefined, delta: GraphDelta): void {
    // `preview` filed what the change touches; nothing unfiles it
    this.rebook(slug, next)
    for (const k of delta.removedEntities) this.entityMap.delete(k)
    for (const e of delta.upsertedEntities) this.entityMap.set(e.key, e)
    for (const k of delta.removedRelationships) this.relationshipMap.delete(k)
    for (const r of delta.upsertedRelationships) this.relationshipMap.set(r.key, r)
  }

  /**
   * What a batch of changes (puts, then deletions, then a new alias map) would do, derived once.
   * Readers keep seeing the graph as it was: what they read (observations, entities, edges,
   * aliases) is put back, while the bookkeeping only changes use (which notes back what) stays
   * derived, since the one writer either applies the result (`applyPreviewedChanges`, a few map
   * updates) or discards it (`discardPreviewedChanges`, which undoes the bookkeeping as well).
   * Exactly one of the two must follow, before any other change.
   */
  previewChanges(change: { put?: readonly Observation[]; deleted?: readonly string[]; aliases?: AliasMap }): PreviewedChanges {
    if (change.aliases) this.fileAll()
    else this.fileFor([...(change.put ?? []).map((o) => [o.slug, o] as const), ...(change.deleted ?? []).map((slug) => [slug, undefined] as const)])
    const aliasesBefore = this.aliases
    const log = previewLog()
    this.previewed = log
    let previewed: PreviewedChanges
    try {
      // every note of the batch is re-filed first and what they touch is recomputed once: a
      // busy entity (thousands of backers) recomputed per note made a large batch quadratic
      const touched = touchedSet()
      for (const o of change.put ?? []) {
        this.detach(o.slug, touched)
        this.attach(o, touched)
      }
      for (const slug of change.deleted ?? []) if (this.observations.has(slug)) this.detach(slug, touched)
      const deltas: GraphDelta[] = [this.settle(touched)]
      if (change.aliases) deltas.push(this.setAliases(change.aliases))
      const observations = new Map([...log.observations.keys()].map((slug) => [slug, this.observations.get(slug)] as const))
      const contributions = new Map([...log.observations.keys()].map((slug) => [slug, this.contributions.get(slug)] as const))
      // ends an edge left for good; until applied, readers still find the edge through them
      const endsLeft = log.endsLeft.filter(([end, key]) => !this.edgesByEnd.has(end, key))
      previewed = { delta: this.combine(deltas), aliases: this.aliases, observations, undo: { log, aliases: aliasesBefore, contributions, endsLeft } }
    } catch (err) {
      this.previewed = null
      this.rollBack(log, aliasesBefore)
      throw err
    } finally {
      this.previewed = null
    }
    this.showAsBefore(previewed)
    return previewed
  }

  /** Applies what `previewChanges` computed, while nothing else changed the graph in between. */
  applyPreviewedChanges(previewed: PreviewedChanges): void {
    this.showAsAfter(previewed)
    const { delta } = previewed
    for (const k of delta.removedEntities) this.entityMap.delete(k)
    for (const e of delta.upsertedEntities) this.entityMap.set(e.key, e)
    for (const k of delta.removedRelationships) this.relationshipMap.delete(k)
    for (const r of delta.upsertedRelationships) this.relationshipMap.set(r.key, r)
  }

  /** Drops what `previewChanges` computed (its save failed): the graph is wholly as it was before. */
  discardPreviewedChanges(previewed: PreviewedChanges): void {
    // the bookkeeping holds the previewed state; undoing it needs the observations it was derived from
    this.showAsAfter(previewed)
    this.rollBack(previewed.undo.log, previewed.undo.aliases)
  }

  /** Puts back what readers see, as it was before the preview. */
  private showAsBefore(previewed: PreviewedChanges): void {
    const { log, aliases, endsLeft } = previewed.undo
    this.aliases = aliases
    for (const [slug, o] of log.observations) o ? this.observations.set(slug, o) : this.observations.delete(slug)
    for (const [slug, c] of log.contributions) c ? this.contributions.set(slug, c) : this.contributions.delete(slug)
    for (const [end, key] of endsLeft) this.edgesByEnd.add(end, key)
    for (const [k, e] of log.entities) e ? this.entityMap.set(k, e) : this.entityMap.delete(k)
    for (const [k, r] of log.relationships) r ? this.relationshipMap.set(k, r) : this.relationshipMap.delete(k)
  }

  /** Observations, aliases and edge ends as the preview derived them (entities and edges are the caller's). */
  private showAsAfter(previewed: PreviewedChanges): void {
    const { contributions, endsLeft } = previewed.undo
    this.aliases = previewed.aliases
    for (const [slug, o] of previewed.observations) o ? this.observations.set(slug, o) : this.observations.delete(slug)
    for (const [slug, c] of contributions) c ? this.contributions.set(slug, c) : this.contributions.delete(slug)
    for (const [end, key] of endsLeft) this.edgesByEnd.remove(end, key)
  }

  /** Undoes a preview entirely, re-filing each observation it touched as it was. */
  private rollBack(log: PreviewLog, aliases: AliasMap): void {
    this.aliases = aliases
    for (const [slug, prev] of log.observations) this.rebook(slug, prev)
    for (const [k, summary] of log.summaries ?? []) summary ? this.summaries.set(k, summary) : this.summaries.delete(k)
    for (const [k, e] of log.entities) e ? this.entityMap.set(k, e) : this.entityMap.delete(k)
    for (const [k, r] of log.relationships) r ? this.relationshipMap.set(k, r) : this.relationshipMap.delete(k)
  }

  /** One delta for several applied one after another: each touched key as the graph now holds it. */
  private combine(deltas: readonly GraphDelta[]): GraphDelta {
    if (deltas.length === 1) return deltas[0]!
    const entities = new Set<string>()
    const relationships = new Set<string>()
    for (const d of deltas) {
      for (const e of d.upsertedEntities) entities.add(e.key)
      for (const k of d.removedEntities) entities.add(k)
      for (const r of d.upsertedRelationships) relationships.add(r.key)
      for (const k of d.removedRelationships) relationships.add(k)
    }
    const out: GraphDelta = { upsertedEntities: [], removedEntities: [], upsertedRelationships: [], removedRelationships: [], backing: mergeBacking(deltas) }
    for (const k of entities) {
      const e = this.entityMap.get(k)
      if (e) out.upsertedEntities.push(e)
      else out.removedEntities.push(k)
    }
    for (const k of relationships) {
      const r = this.relationshipMap.get(k)
      if (r) out.upsertedRelationships.push(r)
      else out.removedRelationships.push(k)
    }
    return out
  }

  /** Keeps, while previewing, a copy of a summary before its first change. */
  private keepSummary(key: string): void {
    const log = this.previewed
    if (!log?.summaries || log.summaries.has(key)) return
    const s = this.summaries.get(key)
    log.summaries.set(key, s && copySummary(s))
  }

  /** Re-files an observation's backing (which entities and edges it supports) without recomputing them. */
  private rebook(slug: string, o: Observation | undefined): void {
    const ignored = touchedSet()
    this.detach(slug, ignored)
    if (o) this.attach(o, ignored)
  }

  private setEntity(key: string, e: Entity | undefined): void {
    if (this.previewed && !this.previewed.entities.has(key)) this.previewed.entities.set(key, this.entityMap.get(key))
    if (e) this.entityMap.set(key, e)
    else this.entityMap.delete(key)
  }

  private setRelationship(key: string, r: Relationship | undefined): void {
    if (this.previewed && !this.previewed.relationships.has(key)) this.previewed.relationships.set(key, this.relationshipMap.get(key))
    if (r) this.relationshipMap.set(key, r)
    else this.relationshipMap.delete(key)
  }

  /**
   * Takes over the whole state of `next`, a graph derived at once from this one's observations
   * and more (an import): cheaper than applying each addition again to this one. Returns what
   * was live here and is not in `next`; everything in `next` counts as changed. `next` must not
   * be used afterwards.
   */
  replaceWith(next: Graph): { removedEntities: string[]; removedRelationships: string[] } {
    if (this.previewed || next.previewed) throw new Error('a graph cannot be replaced while a change is previewed')
    const removedEntities = [...this.entityMap.keys()].filter((k) => !next.entityMap.has(k))
    const removedRelationships = [...this.relationshipMap.keys()].filter((k) => !next.relationshipMap.has(k))
    this.entityMap = next.entityMap
    this.relationshipMap = next.relationshipMap
    this.observations = next.observations
    this.aliases = next.aliases
    this.contributions = next.contributions
    this.entityBackers = next.entityBackers
    this.summaries = next.summaries
    this.edgeBackers = next.edgeBackers
    this.edgesByEnd = next.edgesByEnd
    this.savedEdges = next.savedEdges
    this.authored = next.authored
    this.unfiled = next.unfiled
    this.unfiledAt = next.unfiledAt
    this.readAhead = next.readAhead
    this.savedBacking = next.savedBacking
    this.dormant = next.dormant
    this.dormantByEnd = next.dormantByEnd
    this.filedEntities = next.filedEntities
    this.filedEdges = next.filedEdges
    return { removedEntities, removedRelationships }
  }

  /** Replace the alias map; re-derives only observations that name a variant whose mapping changed. */
  setAliases(aliases: AliasMap): GraphDelta {
    this.fileAll()
    const changed = new Set<string>()
    for (const [v, c] of aliases) if (this.aliases.get(v) !== c) changed.add(v)
    for (const [v] of this.aliases) if (!aliases.has(v)) changed.add(v)
    this.aliases = new Map(aliases)
    const slugs = new Set<string>()
    for (const v of changed) for (const s of this.authored.get(v) ?? []) slugs.add(s)
    const touched = touchedSet()
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
    // The graph's own guard, whatever a checker let through: a name of symbols alone names no
    // entity, and an edge's type is normalized as the write contract normalizes it, so "Works On"
    // and works_on are one edge.
    const entities = new Set(entityKeys.filter((k) => k !== ''))
    const relationships = new Map<string, { source: string; type: string; target: string }>()
    const relKeys = o.relationships.map((r) => {
      const source = this.resolveName(r.source)
      const target = this.resolveName(r.target)
      const type = normalizeType(r.type)
      // a merge can turn an edge into a self-loop: dropped, as consolidation requires
      if (source === target || !source || !target || !type) return null
      const key = relationshipKey(source, type, target)
      relationships.set(key, { source, type, target })
      return key
    })
    const descriptionKeys = o.entities.map((e) => (e.description ? words(e.description).join(' ') || e.description : ''))
    return { entities, relationships, authoredKeys, entityKeys, relKeys, descriptionKeys }
  }

  private detach(slug: string, touched: Touched): void {
    const prev = this.observations.get(slug)
    const c = this.contributions.get(slug)
    if (this.previewed && !this.previewed.observations.has(slug)) {
      this.previewed.observations.set(slug, prev)
      this.previewed.contributions.set(slug, c)
    }
    if (!prev || !c) return
    for (const k of c.entities) {
      this.keepSummary(k)
      const left = unback(this.entityBackers, k, slug)
      if (left !== 'absent') touched.backing.record('entity', k, slug, false)
      const summary = this.summaries.get(k)
      if (left === 'emptied') this.summaries.delete(k)
      else if (summary) {
        if (summary.latestNaming === slug) summary.stale = true
        // each description it gave loses one note; a group that loses its latest or first note is recounted on the next read
        c.entityKeys.forEach((e, i) => {
          if (e !== k) return
          const t = explicitType(prev.entities[i]!.type)
          if (t) {
            const tg = summary.types.get(t)
            if (!tg) summary.stale = true
            else if (--tg.count === 0) summary.types.delete(t)
            else if (tg.latest === slug) summary.stale = true
          }
          const d = c.descriptionKeys[i]
          if (!d) return
          const g = summary.given.get(d)
          if (!g) summary.stale = true
          else if (--g.count === 0) summary.given.delete(d)
          else if (g.latest === slug || g.first === slug) summary.stale = true
        })
        summary.queries.delete(slug)
      }
      touched.entities.add(k)
    }
    for (const [k, r] of c.relationships) {
      const left = unback(this.edgeBackers, k, slug)
      if (left !== 'absent') touched.backing.record('relationship', k, slug, false)
      if (left === 'emptied') {
        this.edgesByEnd.remove(r.source, k)
        this.edgesByEnd.remove(r.target, k)
        this.previewed?.endsLeft.push([r.source, k], [r.target, k])
      }
      touched.edges.add(k)
    }
    for (const k of authoredKeysOf(prev)) removeFrom(this.authored, k, slug)
    this.observations.delete(slug)
    this.contributions.delete(slug)
  }

  private attach(o: Observation, touched: Touched, given?: Contribution): void {
    const c = given ?? this.contributionOf(o)
    this.observations.set(o.slug, o)
    this.contributions.set(o.slug, c)
    for (const k of authoredKeysOf(o)) addTo(this.authored, k, o.slug)
    for (const k of c.entities) {
      this.keepSummary(k)
      if (back(this.entityBackers, k, o.slug)) touched.backing.record('entity', k, o.slug, true)
      const summary = this.summaries.get(k)
      if (summary && !summary.stale) this.fold(summary, k, o.slug)
      touched.entities.add(k)
    }
    for (const [k, r] of c.relationships) {
      if (back(this.edgeBackers, k, o.slug)) touched.backing.record('relationship', k, o.slug, true)
      this.edgesByEnd.add(r.source, k)
      this.edgesByEnd.add(r.target, k)
      touched.edges.add(k)
    }
  }

  /** Recompute every touched entity, then every edge whose backing or ends changed, then degrees. */
  private settle(touched: Touched): GraphDelta {
    const delta: GraphDelta = { upsertedEntities: [], removedEntities: [], upsertedRelationships: [], removedRelationships: [], backing: touched.backing.list() }
    const lived = new Map<string, boolean>()
    for (const k of touched.entities) {
      lived.set(k, this.entityMap.has(k))
      this.recomputeEntity(k)
    }
    const edges = new Set(touched.edges)
    for (const [k, was] of lived) {
      if (was !== this.entityMap.has(k)) for (const e of this.edgesByEnd.of(k)) edges.add(e)
    }
    // an entity's degree moves by the edges that came alive or died, so a well-connected entity
    // is not recounted edge by edge on every write
    const degreeChanged = new Map<string, number>()
    const bump = (key: string, by: number) => degreeChanged.set(key, (degreeChanged.get(key) ?? 0) + by)
    for (const k of edges) {
      const before = this.relationshipMap.get(k)
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
      const e = this.entityMap.get(k)
      // replaced, not mutated: a returned delta must not change when the graph moves on
      if (e && by !== 0) this.setEntity(k, { ...e, degree: e.degree + by })
    }
    const upserted = new Set([...touched.entities, ...degreeChanged.keys()])
    for (const k of [...upserted].sort()) {
      const e = this.entityMap.get(k)
      if (e) delta.upsertedEntities.push(e)
      else if (lived.get(k)) delta.removedEntities.push(k)
    }
    delta.removedRelationships.sort()
    delta.upsertedRelationships.sort((a, b) => (a.key < b.key ? -1 : 1))
    return delta
  }

  /**
   * The backers `recomputeEntity` reads, kept as backers come and go: an entity named in most
   * notes (the memory's owner) has thousands, and a write adding one compares it with the
   * current winners instead of scanning them all. Losing a winner marks the summary stale, and
   * the next read rebuilds it in one pass.
   */
  private summaryOf(key: string, backing: Backers): Summary {
    const known = this.summaries.get(key)
    if (known && !known.stale) return known
    const summary: Summary = { latestNaming: undefined, queries: new Set(), given: new Map(), types: new Map(), stale: false }
    for (const slug of backing.set) this.fold(summary, key, slug)
    this.keepSummary(key)
    this.summaries.set(key, summary)
    return summary
  }

  /**
   * Counts one backer into a summary: each description it gives (how many notes give it, the
   * latest and the first to), each type it gives explicitly (how many, the latest), the most
   * recent note naming the entity itself (the display name), and those with retrieval queries.
   */
  private fold(summary: Summary, key: string, slug: string): void {
    const o = this.observations.get(slug) as Observation
    const c = this.contributions.get(slug) as Contribution
    let names = false
    let asks = false
    for (let i = 0; i < o.entities.length; i++) {
      if (c.entityKeys[i] !== key) continue
      if (c.authoredKeys[i] === key) names = true
      if (o.entities[i]!.queries.length) asks = true
      const t = explicitType(o.entities[i]!.type)
      if (t) {
        const tg = summary.types.get(t)
        if (!tg) summary.types.set(t, { count: 1, latest: slug })
        else {
          tg.count++
          if (compareRecency(o, this.observations.get(tg.latest) as Observation) < 0) tg.latest = slug
        }
      }
      const d = c.descriptionKeys[i]!
      if (!d) continue
      const g = summary.given.get(d)
      if (!g) summary.given.set(d, { count: 1, latest: slug, at: i, first: slug })
      else {
        g.count++
        if (compareRecency(o, this.observations.get(g.latest) as Observation) < 0) {
          g.latest = slug
          g.at = i
        }
        if (compareRecency(o, this.observations.get(g.first) as Observation) > 0) g.first = slug
      }
    }
    if (names && (summary.latestNaming === undefined || compareRecency(o, this.observations.get(summary.latestNaming) as Observation) < 0)) summary.latestNaming = slug
    if (asks) summary.queries.add(slug)
  }

  /**
   * The description rule, the same on every device: an entity lives while some note describes
   * it. It shows the description the most of its notes give (case, spacing and punctuation
   * aside); ties go to the longer one, then to the one given first. So a passing mention does
   * not replace a summary, and a note may name the entity without describing it. The other
   * descriptions are kept for matching. Its type follows the type rule (`typeOf`), apart from
   * descriptions; its display name, the latest note's spelling of its own key.
   */
  private recomputeEntity(key: string): void {
    const backing = this.entityBackers.get(key)
    if (!backing || backing.set.size === 0) {
      this.setEntity(key, undefined)
      return
    }
    const summary = this.summaryOf(key, backing)
    if (summary.given.size === 0) {
      // only named, never described: the entity waits, dormant, for a note that describes it
      this.setEntity(key, undefined)
      return
    }
    const ranked = rankDescriptions(summary.given, (g) => (this.observations.get(g.latest) as Observation).entities[g.at]!.description, (a, b) => compareRecency(this.observations.get(a) as Observation, this.observations.get(b) as Observation), 1 + MAX_OTHER_DESCRIPTIONS)
    const shown = ranked[0]!
    const shownEntity = (this.observations.get(shown.group.latest) as Observation).entities[shown.group.at]!
    const latestNaming = summary.latestNaming === undefined ? undefined : this.observations.get(summary.latestNaming)
    const withQueries = [...summary.queries].map((slug) => this.observations.get(slug) as Observation)
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
    const prev = this.entityMap.get(key)
    this.setEntity(key, {
      key,
      name: display ?? shownEntity.name,
      type: this.typeOf(summary),
      description: shown.text,
      descriptions: ranked.slice(1, 1 + MAX_OTHER_DESCRIPTIONS).map((g) => g.text),
      queries,
      degree: prev?.degree ?? this.degreeOf(key),
      // a copy of the list kept sorted as backers come and go: no sort per write
      observations: backing.sorted.slice(),
    })
  }

  /**
   * The type rule, the same on every device: an explicitly given type wins over the default
   * (`thing`), and a note that describes an entity without a type never changes it. Among the
   * explicit types, the one the most notes give; a tie goes to the one given latest, then to
   * the first by text. No explicit type ever given: the default.
   */
  private typeOf(summary: Summary): string {
    let best: [string, TypeGroup] | undefined
    for (const entry of summary.types) {
      if (!best) best = entry
      else {
        const [t, g] = entry
        const [bt, bg] = best
        const order = bg.count - g.count || compareRecency(this.observations.get(g.latest) as Observation, this.observations.get(bg.latest) as Observation) || (t < bt ? -1 : 1)
        if (order < 0) best = entry
      }
    }
    return best ? best[0] : DEFAULT_ENTITY_TYPE
  }

  private recomputeEdge(key: string): Relationship | undefined {
    const backing = this.edgeBackers.get(key)
    const firstSlug = backing?.sorted[0]
    const first = firstSlug !== undefined ? this.contributions.get(firstSlug)?.relationships.get(key) : undefined
    if (!backing || !first || !this.entityMap.has(first.source) || !this.entityMap.has(first.target)) {
      this.setRelationship(key, undefined)
      return undefined
    }
    // the description is the first non-empty one in recency order (then statement order): one
    // pass keeps the best so far instead of sorting every backer
    let description = ''
    let describedBy: Observation | undefined
    let weight = 0
    for (const slug of backing.sorted) {
      const o = this.observations.get(slug) as Observation
      const c = this.contributions.get(slug) as Contribution
      for (let i = 0; i < o.relationships.length; i++) {
        if (c.relKeys[i] !== key) continue
        const r = o.relationships[i]!
        weight += r.weight
        if (r.description && (!describedBy || (describedBy !== o && compareRecency(o, describedBy) < 0))) {
          description = r.description
          describedBy = o
        }
      }
    }
    const rel: Relationship = { key, source: first.source, type: first.type, target: first.target, description, weight, observations: backing.sorted.slice() }
    this.setRelationship(key, rel)
    return rel
  }

  private degreeOf(key: string): number {
    let n = 0
    for (const k of this.edgesByEnd.of(key)) if (this.relationshipMap.has(k)) n++
    return n
  }

  /** Keys (after aliases) of the live entities an observation names. */
  entitiesOf(slug: string): string[] {
    let c = this.contributions.get(slug)
    if (!c && this.unfiled.length) {
      // a note not read since the open backs what the save says it backed: a change since then
      // filed every note backing a key whose life it changed, and this one is not filed
      const place = this.savedBacking && this.observations.savedPlace(slug)
      if (place !== undefined) return this.savedBacking!.keysAt(place).filter((k) => this.entityMap.has(k))
      // a note an open has not filed yet is read from itself, without filing it out of order;
      // what it gave is kept for its filing, so a note shown by many recalls is read once
      c = this.readAhead.get(slug)
      const held = c ? undefined : this.observations.get(slug)
      if (held) this.readAhead.set(slug, (c = this.contributionOf(held)))
    }
    if (!c) return []
    const out: string[] = []
    for (const k of c.entities) if (this.entityMap.has(k)) out.push(k)
    return out
  }

  /** Every stated edge (live or dormant) with each note that states it, for storing the backing whole. */
  *edgeBacking(): IterableIterator<{ key: string; slug: string }> {
    this.fileAll()
    for (const [key, b] of this.edgeBackers) for (const slug of b.sorted) yield { key, slug }
  }

  /** Live edges touching an entity, in no order: for callers that order or filter them themselves. */
  *eachEdgeOf(key: string): IterableIterator<Relationship> {
    for (const k of this.edgesByEnd.of(key)) {
      const r = this.relationshipMap.get(k)
      if (r) yield r
    }
  }

  /**
   * The live edges joining two of `keys`, in no order. Each joins two different entities (the
   * contract refuses a self-loop and a merge drops one), so it is found from either end: the
   * edges of the entity with the most are not walked, a hub's thousands among them.
   */
  edgesAmong(keys: ReadonlySet<string>): Relationship[] {
    let most: string | undefined
    let mostDegree = -1
    for (const k of keys) {
      const degree = this.entityMap.get(k)?.degree ?? 0
      if (degree > mostDegree) {
        most = k
        mostDegree = degree
      }
    }
    const out: Relationship[] = []
    const seen = new Set<string>()
    for (const k of keys) {
      if (k === most && keys.size > 1) continue
      for (const r of this.eachEdgeOf(k)) {
        if (keys.has(r.source) && keys.has(r.target) && !seen.has(r.key)) {
          seen.add(r.key)
          out.push(r)
        }
      }
    }
    return out
  }

  /** Live edges touching an entity, heaviest first (ties by key). */
  edgesOf(key: string): Relationship[] {
    const out: Relationship[] = []
    for (const k of this.edgesByEnd.of(key)) {
      const r = this.relationshipMap.get(k)
      if (r) out.push(r)
    }
    return out.sort(heaviestFirst)
  }

  /**
   * The `cap` heaviest live edges touching an entity, in `edgesOf` order, and how many live edges
   * it has: one pass with a short sorted list, so a hub's thousands of edges are not all sorted.
   */
  topEdgesOf(key: string, cap: number): { edges: Relationship[]; total: number } {
    const kept = this.topEdges.get(key)
    if (kept && kept.cap >= cap && kept.live === this.relationshipMap && kept.ends === this.edgesByEnd && kept.version === this.relationshipMap.version + this.edgesByEnd.version) {
      return { edges: kept.edges.slice(0, cap), total: kept.total }
    }
    const found = this.findTopEdges(key, cap)
    // a hub's scan is kept until an edge changes: each recall naming it would scan it again
    if (found.total >= KEEP_TOP_EDGES_FROM) {
      if (this.topEdges.size >= KEPT_TOP_EDGES) this.topEdges.clear()
      this.topEdges.set(key, { cap, live: this.relationshipMap, ends: this.edgesByEnd, version: this.relationshipMap.version + this.edgesByEnd.version, edges: found.edges.slice(), total: found.total })
    }
    return found
  }

  private findTopEdges(key: string, cap: number): { edges: Relationship[]; total: number } {
    const top: Relationship[] = []
    let total = 0
    for (const k of this.edgesByEnd.of(key)) {
      const r = this.relationshipMap.get(k)
      if (!r) continue
      total++
      if (top.length === cap && (cap === 0 || heaviestFirst(r, top[cap - 1]!) >= 0)) continue
      let i = top.length
      while (i > 0 && heaviestFirst(r, top[i - 1]!) < 0) i--
      top.splice(i, 0, r)
      if (top.length > cap) top.pop()
    }
    return { edges: top, total }
  }

  /** An edge with display names, as responses show it. */
  present(r: Relationship): RecalledRelationship {
    return {
      source: this.entityMap.get(r.source)?.name ?? r.source,
      type: r.type,
      target: this.entityMap.get(r.target)?.name ?? r.target,
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

function heaviestFirst(a: Relationship, b: Relationship): number {
  return b.weight - a.weight || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
}

/** A batch of changes computed by `Graph.previewChanges`, not yet applied. */
export interface PreviewedChanges {
  delta: GraphDelta
  /** The alias map after the changes. */
  aliases: AliasMap
  /** Every observation the changes re-filed, as it is after them (undefined: removed). */
  observations: ReadonlyMap<string, Observation | undefined>
  /** What the graph needs to apply or discard the changes; the graph's own. */
  readonly undo: PreviewUndo
}

/** The state before a preview, and what the preview derived that readers must not see yet. */
export interface PreviewUndo {
  readonly log: PreviewLog
  readonly aliases: AliasMap
  readonly contributions: ReadonlyMap<string, Contribution | undefined>
  readonly endsLeft: ReadonlyArray<readonly [string, string]>
}

export interface PreviewLog {
  entities: Map<string, Entity | undefined>
  relationships: Map<string, Relationship | undefined>
  /** Null when the caller saves the summaries itself. */
  summaries: Map<string, Summary | undefined> | null
  observations: Map<string, Observation | undefined>
  contributions: Map<string, Contribution | undefined>
  /** Edge ends removed from `edgesByEnd`, as [end, edge key]. */
  endsLeft: Array<[string, string]>
}

function previewLog(keepSummaries = true): PreviewLog {
  return { entities: new Map(), relationships: new Map(), summaries: keepSummaries ? new Map() : null, observations: new Map(), contributions: new Map(), endsLeft: [] }
}

/** What decides an entity's row among its backers; `stale` once a note it counted left. */
export interface Summary {
  latestNaming: string | undefined
  queries: Set<string>
  /** By the description's words: how many notes give it, the latest (and where) and the first. */
  given: Map<string, DescriptionGroup>
  /** By explicit type (never the default): how many notes give it, the latest. */
  types: Map<string, TypeGroup>
  stale: boolean
}

export interface TypeGroup {
  count: number
  latest: string
}

function copySummary(s: Summary): Summary {
  return {
    ...s,
    queries: new Set(s.queries),
    given: new Map([...s.given].map(([d, g]) => [d, { ...g }])),
    types: new Map([...s.types].map(([t, g]) => [t, { ...g }])),
  }
}

/** The type a note gives an entity explicitly: '' when it gave none, or only the default. */
function explicitType(type: string): string {
  return type === DEFAULT_ENTITY_TYPE ? '' : type
}

export interface DescriptionGroup {
  count: number
  latest: string
  at: number
  first: string
}

/**
 * The `k` best descriptions, best first: the most given, then the longer, then the one given
 * first, then by text. One pass that keeps `k`: an entity may have a description per note.
 */
function rankDescriptions(
  given: Map<string, DescriptionGroup>,
  textOf: (g: DescriptionGroup) => string,
  compareSlugs: (a: string, b: string) => number,
  k: number,
): Array<{ group: DescriptionGroup; text: string }> {
  const better = (a: { group: DescriptionGroup; text: string }, b: { group: DescriptionGroup; text: string }) =>
    b.group.count - a.group.count || b.text.length - a.text.length || compareSlugs(b.group.first, a.group.first) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)
  const kept: Array<{ group: DescriptionGroup; text: string }> = []
  for (const group of given.values()) {
    const item = { group, text: textOf(group) }
    if (kept.length === k && better(item, kept[k - 1]!) >= 0) continue
    let at = kept.length
    while (at > 0 && better(item, kept[at - 1]!) < 0) at--
    kept.splice(at, 0, item)
    if (kept.length > k) kept.pop()
  }
  return kept
}

/** The notes backing one entity or edge: a set to test, and the same slugs kept sorted for rows. */
interface Backers {
  set: Set<string>
  sorted: string[]
}

/** Adds a backer; returns false when it was already there. */
function back(map: Map<string, Backers>, key: string, slug: string): boolean {
  let b = map.get(key)
  if (!b) map.set(key, (b = { set: new Set(), sorted: [] }))
  if (b.set.has(slug)) return false
  b.set.add(slug)
  b.sorted.splice(sortedIndex(b.sorted, slug), 0, slug)
  return true
}

/** Removes a backer: 'absent' when it was not one, 'emptied' when it was the last. */
function unback(map: Map<string, Backers>, key: string, slug: string): 'absent' | 'removed' | 'emptied' {
  const b = map.get(key)
  if (!b || !b.set.delete(slug)) return 'absent'
  b.sorted.splice(sortedIndex(b.sorted, slug), 1)
  if (b.set.size > 0) return 'removed'
  map.delete(key)
  return 'emptied'
}

/** Where `slug` is, or would go, in a sorted list (binary search, code-unit order as sort() uses). */
function sortedIndex(sorted: readonly string[], slug: string): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as string) < slug) lo = mid + 1
    else hi = mid
  }
  return lo
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  let s = map.get(key)
  if (!s) map.set(key, (s = new Set()))
  s.add(value)
}

/** Drops the key's set once it is empty. */
function removeFrom(map: Map<string, Set<string>>, key: string, value: string): void {
  const s = map.get(key)
  if (s?.delete(value) && s.size === 0) map.delete(key)
}
