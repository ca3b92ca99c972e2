// The live edges of a saved graph, kept as the save's columns until something asks for one.
// A large memory's save holds hundreds of thousands of edges: making an object, a key and two
// map entries for each would be a large part of an open, while a recall right
// after the open reads the edges of a few dozen entities. Here an edge becomes an object when
// first read, the edges touching an entity come from a compressed adjacency over the save's
// entity numbers, and the graph's changes are kept beside the save (`LiveEdges`, `EdgeEnds`).
import { MemoryError } from './errors'
import { KeySlots, mapSome } from './key-slots'
import { relationshipKey } from './normalize'
import type { Relationship } from './types'

/** A save's live edges as columns; numbers are places in `names`, `types` and `slugs`. */
export interface EdgeColumns {
  names: readonly string[]
  types: readonly string[]
  sources: Uint32Array
  targets: Uint32Array
  edgeTypes: Uint32Array
  weights: Float64Array
  /** Where each edge's notes start in `notes`; one entry more than there are edges. */
  noteStarts: Uint32Array
  notes: Uint32Array
  slugs: readonly string[]
  /** Descriptions by edge number, for the edges that have one. */
  descriptions: ReadonlyMap<number, string>
}

const NONE = -1

export class SavedEdges implements Iterable<Relationship> {
  readonly count: number
  /** Edge numbers touching each name number: `touching[endStarts[n] .. endStarts[n + 1])`. */
  private readonly endStarts: Uint32Array
  private readonly touching: Uint32Array
  private readonly made: Array<Relationship | undefined>
  private readonly keys: Array<string | undefined>
  /** Edge numbers by key, for the keys handed out by `keysTouching`: a read goes from one to the other. */
  private readonly numberOfKey = new Map<string, number>()
  /** Names by number, looked up by scanning at first (a recall's few) and mapped when asked often or in idle time. */
  private readonly nameNumbers: KeySlots

  /**
   * Checks that every number points into its list, and throws a RangeError otherwise: a caller
   * reading a save treats that save as unreadable.
   */
  constructor(private readonly c: EdgeColumns) {
    const m = c.sources.length
    const names = c.names.length
    if (c.targets.length !== m || c.edgeTypes.length !== m || c.weights.length !== m || c.noteStarts.length !== m + 1) throw new RangeError('edge columns of different lengths')
    const starts = new Uint32Array(names + 1)
    for (let i = 0; i < m; i++) {
      const s = c.sources[i]!
      const t = c.targets[i]!
      if (s >= names || t >= names || c.edgeTypes[i]! >= c.types.length) throw new RangeError(`edge ${i} names no saved entity or type`)
      if (c.noteStarts[i + 1]! < c.noteStarts[i]!) throw new RangeError(`edge ${i} has its notes out of order`)
      starts[s + 1]!++
      if (t !== s) starts[t + 1]!++
    }
    if (c.noteStarts[0] !== 0 || c.noteStarts[m] !== c.notes.length) throw new RangeError('edge notes do not add up')
    for (let i = 0; i < c.notes.length; i++) if (c.notes[i]! >= c.slugs.length) throw new RangeError(`edge note ${i} is not a saved note`)
    for (const i of c.descriptions.keys()) if (!Number.isInteger(i) || i < 0 || i >= m) throw new RangeError(`a description for edge ${i}, which is not saved`)
    for (let n = 0; n < names; n++) starts[n + 1]! += starts[n]!
    const touching = new Uint32Array(starts[names]!)
    const filled = starts.slice(0, names)
    for (let i = 0; i < m; i++) {
      const s = c.sources[i]!
      const t = c.targets[i]!
      touching[filled[s]!++] = i
      if (t !== s) touching[filled[t]!++] = i
    }
    this.count = m
    this.endStarts = starts
    this.touching = touching
    this.made = new Array(m)
    this.keys = new Array(m)
    // only a damaged save lists a name twice (the save numbers each once); found when mapped
    this.nameNumbers = new KeySlots(c.names, 0, (name) => new MemoryError('storage_failed', `The saved graph is unreadable (the name "${name}" is listed twice).`, { name }))
  }

  /**
   * Maps up to `count` more names by number, for idle time; true once all are. A damaged save
   * listing a name twice counts as done: the lookups that need the map refuse it (`mapSome`).
   */
  mapNames(count: number): boolean {
    return mapSome(count, this.nameNumbers)
  }

  keyAt(i: number): string {
    let key = this.keys[i]
    if (key === undefined) {
      const c = this.c
      key = this.keys[i] = relationshipKey(c.names[c.sources[i]!]!, c.types[c.edgeTypes[i]!]!, c.names[c.targets[i]!]!)
    }
    return key
  }

  /** The edge numbered `i`, made when first asked for and the same object after. */
  edgeAt(i: number): Relationship {
    let r = this.made[i]
    if (r === undefined) {
      const c = this.c
      const observations: string[] = new Array(c.noteStarts[i + 1]! - c.noteStarts[i]!)
      for (let j = 0, at = c.noteStarts[i]!; j < observations.length; j++, at++) observations[j] = c.slugs[c.notes[at]!]!
      r = this.made[i] = {
        key: this.keyAt(i),
        source: c.names[c.sources[i]!]!,
        type: c.types[c.edgeTypes[i]!]!,
        target: c.names[c.targets[i]!]!,
        description: c.descriptions.get(i) ?? '',
        weight: c.weights[i]!,
        observations,
      }
    }
    return r
  }

  /** The number of the edge with this key, or -1. */
  numberOf(key: string): number {
    const known = this.numberOfKey.get(key)
    if (known !== undefined) return known
    const first = key.indexOf('\u0000')
    const second = key.indexOf('\u0000', first + 1)
    if (first < 0 || second < 0) return NONE
    const s = this.nameNumber(key.slice(0, first))
    const t = this.nameNumber(key.slice(second + 1))
    if (s === undefined || t === undefined) return NONE
    const type = key.slice(first + 1, second)
    const c = this.c
    // the end with fewer edges is the shorter scan
    const end = this.endStarts[s + 1]! - this.endStarts[s]! <= this.endStarts[t + 1]! - this.endStarts[t]! ? s : t
    for (let at = this.endStarts[end]!; at < this.endStarts[end + 1]!; at++) {
      const i = this.touching[at]!
      if (c.sources[i] === s && c.targets[i] === t && c.types[c.edgeTypes[i]!] === type) return i
    }
    return NONE
  }

  /** Keys of the saved edges touching an entity. */
  keysTouching(end: string): string[] {
    const n = this.nameNumber(end)
    if (n === undefined) return []
    const out: string[] = new Array(this.endStarts[n + 1]! - this.endStarts[n]!)
    for (let j = 0, at = this.endStarts[n]!; j < out.length; j++, at++) {
      const i = this.touching[at]!
      const key = (out[j] = this.keyAt(i))
      this.numberOfKey.set(key, i)
    }
    return out
  }

  *[Symbol.iterator](): IterableIterator<Relationship> {
    for (let i = 0; i < this.count; i++) yield this.edgeAt(i)
  }

  private nameNumber(name: string): number | undefined {
    return this.nameNumbers.get(name)
  }
}

/**
 * The live edges by key: a save's edges (if any) with the changes made since beside them. Only
 * the graph changes it; readers see it as a ReadonlyMap.
 */
export class LiveEdges implements ReadonlyMap<string, Relationship> {
  /** Edges set since the save, and saved edges removed since (null). */
  private readonly changed = new Map<string, Relationship | null>()
  /** How many keys of `changed` are saved edges; how many of its values are edges. */
  private shadowed = 0
  private changedLive = 0
  /** Counts every set and delete: what a reader derived from the edges holds while it stands. */
  version = 0

  constructor(private readonly saved?: SavedEdges) {}

  get size(): number {
    return (this.saved?.count ?? 0) - this.shadowed + this.changedLive
  }

  get(key: string): Relationship | undefined {
    const r = this.changed.get(key)
    if (r !== undefined) return r ?? undefined
    const i = this.saved ? this.saved.numberOf(key) : NONE
    return i === NONE ? undefined : this.saved!.edgeAt(i)
  }

  has(key: string): boolean {
    // without making the edge: an entity's degree asks this of each of its edges
    const r = this.changed.get(key)
    return r !== undefined ? r !== null : this.isSaved(key)
  }

  set(key: string, r: Relationship): this {
    this.version++
    const was = this.changed.get(key)
    if (was === undefined) {
      if (this.isSaved(key)) this.shadowed++
    } else if (was !== null) this.changedLive--
    this.changed.set(key, r)
    this.changedLive++
    return this
  }

  delete(key: string): boolean {
    this.version++
    const was = this.changed.get(key)
    if (was === null) return false
    if (was === undefined) {
      if (!this.isSaved(key)) return false
      this.shadowed++
      this.changed.set(key, null)
      return true
    }
    this.changedLive--
    // a saved edge stays shadowed; one made since is simply gone
    if (this.isSaved(key)) this.changed.set(key, null)
    else this.changed.delete(key)
    return true
  }

  *entries(): MapIterator<[string, Relationship]> {
    const saved = this.saved
    if (saved) {
      for (let i = 0; i < saved.count; i++) {
        const key = saved.keyAt(i)
        if (!this.changed.has(key)) yield [key, saved.edgeAt(i)]
      }
    }
    for (const [key, r] of this.changed) if (r) yield [key, r]
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key
  }

  *values(): MapIterator<Relationship> {
    for (const [, r] of this.entries()) yield r
  }

  [Symbol.iterator](): MapIterator<[string, Relationship]> {
    return this.entries()
  }

  forEach(callback: (value: Relationship, key: string, map: ReadonlyMap<string, Relationship>) => void, thisArg?: unknown): void {
    for (const [key, r] of this.entries()) callback.call(thisArg, r, key, this)
  }

  private isSaved(key: string): boolean {
    return this.saved !== undefined && this.saved.numberOf(key) !== NONE
  }
}

/**
 * The keys of every stated edge touching each entity, live or dormant: the save's live edges
 * by their ends, and an entity's own set once a change touches it (copied from the save then).
 */
export class EdgeEnds {
  private readonly own = new Map<string, Set<string>>()
  /** Counts every add and remove, as `LiveEdges.version`. */
  version = 0

  constructor(private readonly saved?: SavedEdges) {}

  of(end: string): Iterable<string> {
    return this.own.get(end) ?? this.saved?.keysTouching(end) ?? []
  }

  has(end: string, key: string): boolean {
    const own = this.own.get(end)
    return own ? own.has(key) : this.saved !== undefined && this.saved.keysTouching(end).includes(key)
  }

  add(end: string, key: string): void {
    this.version++
    this.take(end).add(key)
  }

  remove(end: string, key: string): void {
    this.version++
    const set = this.own.get(end) ?? (this.saved ? this.take(end) : undefined)
    if (!set) return
    set.delete(key)
    // an empty set is kept over a save, or the saved edges would show through again
    if (set.size === 0 && !this.saved) this.own.delete(end)
  }

  private take(end: string): Set<string> {
    let set = this.own.get(end)
    if (!set) this.own.set(end, (set = new Set(this.saved?.keysTouching(end))))
    return set
  }
}
