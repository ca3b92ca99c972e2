// Key -> slot maps that a restore fills only when asked often. A restore has its keys in slot
// order already; filling a map of every key would be a large share of a big memory's open, and
// most opens answer recalls (which score slots) long before anything looks a key up. The
// first changes look up a few keys each: a scan of the keys answers those, and the map is
// built once lookups would cost more than it, or a part at a time in idle time.

/** Lookups by scanning the keys before the map is built instead. */
const SCANS_BEFORE_BUILDING = 64
const GONE = -1

/**
 * A Map of keys to their slots (position + `base`), built from the keys given once enough
 * lookups ask for it, or a part at a time by `buildSome` (in idle time). Until it is whole,
 * `built` is false, a lookup scans the keys not yet in it, and changes are kept beside them.
 * A key listed twice (a corrupt save) is refused when it is put in the map.
 */
export class KeySlots extends Map<string, number> {
  private pending: readonly string[] | undefined
  /** Keys before this position are in the map already (with their slots as restored). */
  private inMap = 0
  /** Keys set or deleted (GONE) since the restore, while the map is not built. */
  private changed = new Map<string, number>()
  private count: number
  private scans = 0
  private unchanged = true

  constructor(
    keys: readonly string[] = [],
    private readonly base = 0,
    /** The error a key listed twice gets, when the map is built. */
    private readonly listedTwice: (key: string) => Error = (key) => new RangeError(`key "${key}" listed twice`),
  ) {
    super()
    this.pending = keys.length ? keys : undefined
    this.count = keys.length
  }

  /** Whether the map was built (or never had keys to build from). */
  get built(): boolean {
    return this.pending === undefined
  }

  /**
   * Whether nothing was set or deleted since the restore: each key still has the slot of its
   * position, so a caller that numbered things the same way needs no lookup.
   */
  get asRestored(): boolean {
    return this.unchanged
  }

  /** Puts up to `count` more keys in the map; true once it is whole. */
  buildSome(count: number): boolean {
    const keys = this.pending
    if (keys === undefined) return true
    const end = Math.min(keys.length, this.inMap + count)
    for (let i = this.inMap; i < end; i++) {
      const key = keys[i]!
      if (super.has(key)) {
        // left as it was: every later use fails the same way
        super.clear()
        this.inMap = 0
        throw this.listedTwice(key)
      }
      super.set(key, i + this.base)
    }
    this.inMap = end
    if (end < keys.length) return false
    for (const [key, slot] of this.changed) {
      if (slot === GONE) super.delete(key)
      else super.set(key, slot)
    }
    this.changed.clear()
    this.pending = undefined
    return true
  }

  private build(): void {
    this.buildSome(Infinity)
  }

  /** The slot of `key` while the map is not whole: its change, or its position among the keys. */
  private find(key: string, keys: readonly string[]): number | undefined {
    const changed = this.changed.get(key)
    if (changed !== undefined) return changed === GONE ? undefined : changed
    const mapped = super.get(key)
    if (mapped !== undefined) return mapped
    const at = keys.indexOf(key, this.inMap)
    return at < 0 ? undefined : at + this.base
  }

  override get(key: string): number | undefined {
    const keys = this.pending
    if (keys !== undefined && this.scans++ < SCANS_BEFORE_BUILDING) return this.find(key, keys)
    this.build()
    return super.get(key)
  }

  override has(key: string): boolean {
    return this.get(key) !== undefined
  }

  override set(key: string, slot: number): this {
    this.unchanged = false
    const keys = this.pending
    if (keys !== undefined && this.scans < SCANS_BEFORE_BUILDING) {
      this.scans++
      if (this.find(key, keys) === undefined) this.count++
      this.changed.set(key, slot)
      return this
    }
    this.build()
    return super.set(key, slot)
  }

  override delete(key: string): boolean {
    const keys = this.pending
    if (keys !== undefined && this.scans < SCANS_BEFORE_BUILDING) {
      this.scans++
      if (this.find(key, keys) === undefined) return false
      this.unchanged = false
      this.count--
      this.changed.set(key, GONE)
      return true
    }
    this.build()
    const deleted = super.delete(key)
    if (deleted) this.unchanged = false
    return deleted
  }

  override clear(): void {
    this.pending = undefined
    this.inMap = 0
    this.changed.clear()
    this.unchanged = false
    super.clear()
  }

  override get size(): number {
    return this.pending !== undefined ? this.count : super.size
  }

  override forEach(fn: (slot: number, key: string, map: Map<string, number>) => void, thisArg?: unknown): void {
    this.build()
    super.forEach(fn, thisArg)
  }

  override keys(): MapIterator<string> {
    this.build()
    return super.keys()
  }

  override values(): MapIterator<number> {
    this.build()
    return super.values()
  }

  override entries(): MapIterator<[string, number]> {
    this.build()
    return super.entries()
  }

  override [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries()
  }
}

/**
 * Puts up to `count` more keys in the first of `maps` not yet whole (plain maps are whole);
 * true once all are. A map refusing a key listed twice counts as done: the lookups that need
 * it refuse it too.
 */
export function mapSome(count: number, ...maps: Map<string, number>[]): boolean {
  for (const map of maps) {
    if (!(map instanceof KeySlots) || map.built) continue
    try {
      return map.buildSome(count) && maps.every((m) => !(m instanceof KeySlots) || m.built)
    } catch {
      return true
    }
  }
  return true
}
