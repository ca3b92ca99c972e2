// Entity vectors in one flat Int8Array, scanned by brute force. Each entity owns a few rows
// (its description and each retrieval query); its similarity to a query is the best of its rows.
// A flat scan beats per-document arrays at 100k entities and has no index to rebuild on open.
//
// Each row is stored as int8 with its own scale (symmetric: the row's largest magnitude maps to
// 127), a quarter of the bytes of float32, which is what a scan and a saved snapshot cost. The
// query is int16 (65k levels: nearly the float it came from), and the scan runs on SIMD where
// there is (int8-dots.ts).
import { Int8Dots, quantizeQuery } from './int8-dots'

/** A row's values over its scale, rounded: what `set` stores. */
const LEVELS = 127

export interface QuantizedRows {
  /** Rows per slot, in slot order. */
  rowCounts: Uint16Array
  /** All rows, `dimensions` values each, in slot order. */
  data: Int8Array
  /** One per row: value = data × scale. */
  scales: Float32Array
}

/** Quantizes `v` into `out` (at `at`) and returns its scale. */
export function quantizeInto(v: ArrayLike<number>, out: Int8Array, at: number): number {
  let max = 0
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(v[i]!)
    if (a > max) max = a
  }
  if (!(max > 0) || !Number.isFinite(max)) {
    out.fill(0, at, at + v.length)
    return 0
  }
  const inv = LEVELS / max
  for (let i = 0; i < v.length; i++) out[at + i] = Math.round(v[i]! * inv)
  return Math.fround(max / LEVELS)
}

export class VectorRows {
  private readonly dots: Int8Dots
  /** Row bytes in `data`: `dimensions` rounded up for SIMD, the rest zero. */
  private readonly stride: number
  private data: Int8Array
  private scale: Float32Array
  /** row -> owning entity slot */
  private owner: Int32Array
  /** entity slot -> its rows, once set or changed (see `loadedFrom`) */
  private readonly rowsOf: number[][] = []
  /**
   * Until its rows change, slot s of a load owns rows loadedFrom[s] .. loadedFrom[s + 1] - 1:
   * a restore of 100,000 slots makes no array for each.
   */
  private loadedFrom: Int32Array | undefined
  private count = 0

  constructor(readonly dimensions: number, capacity = 64, opts: { simd?: boolean } = {}) {
    this.dots = new Int8Dots(dimensions, opts.simd === false)
    this.stride = this.dots.stride
    this.dots.reserve(capacity)
    this.data = this.dots.rowsView()
    this.scale = new Float32Array(capacity)
    this.owner = new Int32Array(capacity)
  }

  get rows(): number {
    return this.count
  }

  /** Bytes the stored rows take (values, padded for SIMD, and scales): what one scan reads. */
  get bytes(): number {
    return this.count * (this.stride + 4)
  }

  /** Replaces the rows of `slot` with `vectors` (each of `dimensions` floats), quantized. */
  set(slot: number, vectors: readonly Float32Array[]): void {
    for (const v of vectors) if (v.length !== this.dimensions) throw new RangeError(`vector has ${v.length} dimensions, expected ${this.dimensions}`)
    this.clear(slot)
    const own: number[] = []
    for (const v of vectors) {
      this.reserve(this.count + 1)
      this.scale[this.count] = quantizeInto(v, this.data, this.count * this.stride)
      this.owner[this.count] = slot
      own.push(this.count++)
    }
    this.rowsOf[slot] = own
  }

  /** Fills an empty instance with rows already quantized, slot by slot in order (a restore). */
  load(rows: QuantizedRows): void {
    if (this.count !== 0) throw new Error('VectorRows.load needs an empty instance')
    const total = rows.scales.length
    const d = this.dimensions
    if (rows.data.length !== total * d) throw new RangeError('quantized rows do not match their scales')
    this.reserve(total)
    if (this.stride === d) this.data.set(rows.data)
    else for (let r = 0; r < total; r++) this.data.set(rows.data.subarray(r * d, (r + 1) * d), r * this.stride)
    this.scale.set(rows.scales)
    const slots = rows.rowCounts.length
    const from = new Int32Array(slots + 1)
    let row = 0
    for (let slot = 0; slot < slots; slot++) {
      const n = rows.rowCounts[slot]!
      from[slot] = row
      if (row + n > total) throw new RangeError('row counts do not match the quantized rows')
      this.owner.fill(slot, row, row + n)
      row += n
    }
    from[slots] = row
    if (row !== total) throw new RangeError('row counts do not match the quantized rows')
    this.loadedFrom = from
    this.count = total
  }

  /** The rows of slots 0..slots-1, in slot order, as `load` takes them. */
  export(slots: number): QuantizedRows {
    const d = this.dimensions
    const rowCounts = new Uint16Array(slots)
    let total = 0
    for (let slot = 0; slot < slots; slot++) total += (rowCounts[slot] = this.rowsAt(slot).length)
    const data = new Int8Array(total * d)
    const scales = new Float32Array(total)
    let at = 0
    for (let slot = 0; slot < slots; slot++) {
      for (const row of this.rowsAt(slot)) {
        data.set(this.data.subarray(row * this.stride, row * this.stride + d), at * d)
        scales[at++] = this.scale[row]!
      }
    }
    return { rowCounts, data, scales }
  }

  /** Drops the rows of `slot`; the last rows move into the holes so the scan stays dense. */
  clear(slot: number): void {
    const own = this.rowsAt(slot)
    if (!own.length) return
    // remove highest rows first so a moved row is never one still to be removed
    for (const row of [...own].sort((a, b) => b - a)) this.removeRow(row)
    this.rowsOf[slot] = []
  }

  /** Renames `from` to `to` (the caller keeps entity slots dense by moving the last one). */
  move(from: number, to: number): void {
    const own = this.rowsAt(from)
    for (const row of own) this.owner[row] = to
    this.rowsOf[to] = own
    this.rowsOf[from] = []
  }

  /** The rows of `slot` as floats (as stored: after rounding), in the order they were set. */
  vectorsOf(slot: number): Float32Array[] {
    const d = this.dimensions
    return this.rowsAt(slot).map((row) => {
      const s = this.scale[row]!
      return Float32Array.from(this.data.subarray(row * this.stride, row * this.stride + d), (q) => q * s)
    })
  }

  /** The best dot product of `v` with any row of `slot` (as stored); 0 for a slot with none. Reads the rows in place. */
  bestDot(slot: number, v: Float32Array): number {
    const d = this.dimensions
    let best = 0
    for (const row of this.rowsAt(slot)) {
      const base = row * this.stride
      let dot = 0
      for (let i = 0; i < d; i++) dot += this.data[base + i]! * v[i]!
      dot *= this.scale[row]!
      if (dot > best) best = dot
    }
    return best
  }

  /** Writes into `out[slot]` the best dot product of `query` with any row of that slot (others stay as they were). */
  maxSimilarity(query: Float32Array, out: Float32Array): void {
    if (query.length !== this.dimensions) throw new RangeError(`query has ${query.length} dimensions, expected ${this.dimensions}`)
    const q = quantizeQuery(query)
    // integer sums: the same on SIMD and off it, and after a restore
    const sums = this.dots.scan(q.values, this.count)
    const scale = this.scale
    for (let row = 0; row < this.count; row++) {
      const dot = sums[row]! * scale[row]! * q.scale
      const slot = this.owner[row]!
      if (dot > out[slot]!) out[slot] = dot
    }
  }

  /** The rows of `slot`, as an array of its own from now on (a loaded slot's are made here). */
  private rowsAt(slot: number): number[] {
    let own = this.rowsOf[slot]
    if (own === undefined) {
      own = []
      const from = this.loadedFrom
      if (from && slot + 1 < from.length) for (let row = from[slot]!; row < from[slot + 1]!; row++) own.push(row)
      this.rowsOf[slot] = own
    }
    return own
  }

  private removeRow(row: number): void {
    const last = this.count - 1
    if (row !== last) {
      const d = this.stride
      this.data.copyWithin(row * d, last * d, (last + 1) * d)
      this.scale[row] = this.scale[last]!
      const moved = this.owner[last]!
      this.owner[row] = moved
      const list = this.rowsAt(moved)
      list[list.indexOf(last)] = row
    }
    this.count = last
  }

  private reserve(rows: number): void {
    if (rows <= this.owner.length) return
    const capacity = Math.max(rows, this.owner.length * 2)
    this.dots.reserve(capacity)
    this.data = this.dots.rowsView()
    const scale = new Float32Array(capacity)
    scale.set(this.scale.subarray(0, this.count))
    const owner = new Int32Array(capacity)
    owner.set(this.owner.subarray(0, this.count))
    this.scale = scale
    this.owner = owner
  }
}
