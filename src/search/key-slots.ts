// Key -> slot maps that a restore fills only when first asked. A restore has its keys in slot
// order already; a map of 100,000 of them took 50-140 ms of an open in a browser worker, and
// most opens answer recalls (which score slots) long before anything looks a key up.

/**
 * A Map of keys to their slots (position + `base`), built on first use from the keys given.
 * Until then `built` is false, which also tells that nothing was set or deleted since.
 */
export class KeySlots extends Map<string, number> {
  private pending: readonly string[] | undefined

  constructor(
    keys: readonly string[] = [],
    private readonly base = 0,
    /** The error a key listed twice gets, when the map is built. */
    private readonly listedTwice: (key: string) => Error = (key) => new RangeError(`key "${key}" listed twice`),
  ) {
    super()
    this.pending = keys.length ? keys : undefined
  }

  /** Whether the map was built (or never had keys to build from). */
  get built(): boolean {
    return this.pending === undefined
  }

  private build(): void {
    const keys = this.pending
    if (keys === undefined) return
    this.pending = undefined
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      if (super.has(key)) {
        // left as it was: every later use fails the same way
        super.clear()
        this.pending = keys
        throw this.listedTwice(key)
      }
      super.set(key, i + this.base)
    }
  }

  override get(key: string): number | undefined {
    this.build()
    return super.get(key)
  }

  override has(key: string): boolean {
    this.build()
    return super.has(key)
  }

  override set(key: string, slot: number): this {
    this.build()
    return super.set(key, slot)
  }

  override delete(key: string): boolean {
    this.build()
    return super.delete(key)
  }

  override clear(): void {
    this.pending = undefined
    super.clear()
  }

  override get size(): number {
    this.build()
    return super.size
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
