// Entity vectors in one flat Float32Array, scanned by brute force. Each entity owns a few rows
// (its description and each retrieval query); its similarity to a query is the best of its rows.
// A flat scan beats per-document arrays at 100k entities and has no index to rebuild on open.

export class VectorRows {
  private data: Float32Array
  /** row -> owning entity slot */
  private owner: Int32Array
  /** entity slot -> its rows */
  private readonly rowsOf: number[][] = []
  private count = 0

  constructor(readonly dimensions: number, capacity = 64) {
    this.data = new Float32Array(capacity * dimensions)
    this.owner = new Int32Array(capacity)
  }

  get rows(): number {
    return this.count
  }

  /** Replaces the rows of `slot` with `vectors` (each of `dimensions` floats). */
  set(slot: number, vectors: readonly Float32Array[]): void {
    this.clear(slot)
    const own: number[] = []
    for (const v of vectors) {
      if (v.length !== this.dimensions) throw new RangeError(`vector has ${v.length} dimensions, expected ${this.dimensions}`)
      this.reserve(this.count + 1)
      this.data.set(v, this.count * this.dimensions)
      this.owner[this.count] = slot
      own.push(this.count++)
    }
    this.rowsOf[slot] = own
  }

  /** Drops the rows of `slot`; the last rows move into the holes so the scan stays dense. */
  clear(slot: number): void {
    const own = this.rowsOf[slot]
    if (!own) return
    // remove highest rows first so a moved row is never one still to be removed
    for (const row of [...own].sort((a, b) => b - a)) this.removeRow(row)
    this.rowsOf[slot] = []
  }

  /** Renames `from` to `to` (the caller keeps entity slots dense by moving the last one). */
  move(from: number, to: number): void {
    const own = this.rowsOf[from] ?? []
    for (const row of own) this.owner[row] = to
    this.rowsOf[to] = own
    this.rowsOf[from] = []
  }

  /** The rows of `slot`, copied, in the order they were set. */
  vectorsOf(slot: number): Float32Array[] {
    return (this.rowsOf[slot] ?? []).map((row) => this.data.slice(row * this.dimensions, (row + 1) * this.dimensions))
  }

  /** Writes into `out[slot]` the best dot product of `query` with any row of that slot (others stay as they were). */
  maxSimilarity(query: Float32Array, out: Float32Array): void {
    const d = this.dimensions
    const data = this.data
    const tail = d - (d % 4)
    for (let row = 0; row < this.count; row++) {
      const base = row * d
      // four independent sums let the CPU overlap the multiply-adds
      let a = 0, b = 0, c = 0, e = 0
      let i = 0
      for (; i < tail; i += 4) {
        a += data[base + i]! * query[i]!
        b += data[base + i + 1]! * query[i + 1]!
        c += data[base + i + 2]! * query[i + 2]!
        e += data[base + i + 3]! * query[i + 3]!
      }
      for (; i < d; i++) a += data[base + i]! * query[i]!
      const dot = a + b + c + e
      const slot = this.owner[row]!
      if (dot > out[slot]!) out[slot] = dot
    }
  }

  private removeRow(row: number): void {
    const last = this.count - 1
    if (row !== last) {
      const d = this.dimensions
      this.data.copyWithin(row * d, last * d, (last + 1) * d)
      const moved = this.owner[last]!
      this.owner[row] = moved
      const list = this.rowsOf[moved]!
      list[list.indexOf(last)] = row
    }
    this.count = last
  }

  private reserve(rows: number): void {
    if (rows <= this.owner.length) return
    const capacity = Math.max(rows, this.owner.length * 2)
    const data = new Float32Array(capacity * this.dimensions)
    data.set(this.data.subarray(0, this.count * this.dimensions))
    const owner = new Int32Array(capacity)
    owner.set(this.owner.subarray(0, this.count))
    this.data = data
    this.owner = owner
  }
}
