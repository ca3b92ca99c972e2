// Dot products of int8 rows with an int16 query, sixteen values per step with WebAssembly SIMD.
// Plain JavaScript multiplies one value at a time whatever the element type, so int8 rows alone
// save bytes but not time; SIMD turns the smaller rows into a faster scan. Where SIMD is missing
// the same integer sums are made in JavaScript, so scores are identical on every device.
//
// The module is small enough to write out here (WebAssembly binary format, one function):
//   dots(rows, stride, data, query, out): for each row r, out[r] = Σ data[r·stride + i] · query[i]
// with `stride` bytes per row (a multiple of 16, zero-padded), `query` int16, `out` int32.

/** Row bytes are padded to a multiple of this: one SIMD load. */
export const LANE_BYTES = 16

function leb(n: number): number[] {
  const out: number[] = []
  do {
    let byte = n & 0x7f
    n >>>= 7
    if (n) byte |= 0x80
    out.push(byte)
  } while (n)
  return out
}

function section(id: number, body: number[]): number[] {
  return [id, ...leb(body.length), ...body]
}

const I32 = 0x7f
const V128 = 0x7b
const get = (i: number) => [0x20, i]
const set = (i: number) => [0x21, i]
const tee = (i: number) => [0x22, i]
const i32 = (n: number) => [0x41, ...leb(n)]
const simd = (op: number, ...rest: number[]) => [0xfd, ...leb(op), ...rest]
const load = (offset: number) => simd(0x00, 0, ...leb(offset))
const ADD = 0x6a, SHL = 0x74, LT_U = 0x49, EQZ = 0x45
const EXTEND_LOW_S = 0x87, EXTEND_HIGH_S = 0x88, DOT_I16 = 0xba, ADD_I32X4 = 0xae, EXTRACT_I32 = 0x1b

// params: 0 rows, 1 stride, 2 data, 3 query, 4 out; locals: 5 row, 6 byte in row, 7 unused, 8 acc, 9 the 16 bytes loaded
const body = [
  0x02, 0x40, ...get(0), EQZ, 0x0d, 0, // block; no rows: done
  0x03, 0x40, // loop over rows
  ...simd(0x0c, ...new Array(16).fill(0)), ...set(8), ...i32(0), ...set(6),
  0x03, 0x40, // loop over 16-byte steps
  ...get(2), ...get(6), ADD, ...load(0), ...set(9),
  ...get(8), ...get(9), ...simd(EXTEND_LOW_S), ...get(3), ...get(6), ...i32(1), SHL, ADD, ...load(0), ...simd(DOT_I16), ...simd(ADD_I32X4), ...set(8),
  ...get(8), ...get(9), ...simd(EXTEND_HIGH_S), ...get(3), ...get(6), ...i32(1), SHL, ADD, ...load(16), ...simd(DOT_I16), ...simd(ADD_I32X4), ...set(8),
  ...get(6), ...i32(16), ADD, ...tee(6), ...get(1), LT_U, 0x0d, 0,
  0x0b,
  ...get(4), ...get(5), ...i32(2), SHL, ADD,
  ...get(8), ...simd(EXTRACT_I32, 0), ...get(8), ...simd(EXTRACT_I32, 1), ADD, ...get(8), ...simd(EXTRACT_I32, 2), ADD, ...get(8), ...simd(EXTRACT_I32, 3), ADD,
  0x36, 2, 0, // i32.store
  ...get(2), ...get(1), ADD, ...set(2),
  ...get(5), ...i32(1), ADD, ...tee(5), ...get(0), LT_U, 0x0d, 0,
  0x0b, 0x0b, 0x0b,
]
const locals = [2, 3, I32, 2, V128]
const fn = [...locals, ...body]
const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))]

const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0, 1]),
  ...section(7, [2, ...name('memory'), 2, 0, ...name('dots'), 0, 0]),
  ...section(10, [1, ...leb(fn.length), ...fn]),
])

let compiled: WebAssembly.Module | null | undefined

/** The compiled kernel, or null where WebAssembly SIMD is not supported. */
function kernel(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = typeof WebAssembly === 'object' && WebAssembly.validate(MODULE_BYTES) ? new WebAssembly.Module(MODULE_BYTES) : null
    } catch {
      compiled = null
    }
  }
  return compiled
}

/** Whether scans run on SIMD here (else on the JavaScript loop, with the same results). */
export function simdAvailable(): boolean {
  return kernel() !== null
}

/**
 * Memory holding int8 rows, an int16 query and the int32 results, and the scan over them.
 * Views must be taken again after `reserve`, which may move the memory.
 */
export class Int8Dots {
  private readonly memory: WebAssembly.Memory
  private readonly dots: ((rows: number, stride: number, data: number, query: number, out: number) => void) | null
  readonly stride: number
  /** Where the query's int16 values start, and the rows. */
  private readonly queryAt = 0
  private readonly dataAt: number
  private capacity = 0

  constructor(readonly dimensions: number, forceJs = false) {
    this.stride = Math.ceil(Math.max(1, dimensions) / LANE_BYTES) * LANE_BYTES
    this.dataAt = this.stride * 2
    const module = forceJs ? null : kernel()
    if (module) {
      const instance = new WebAssembly.Instance(module)
      this.memory = instance.exports.memory as WebAssembly.Memory
      this.dots = instance.exports.dots as (rows: number, stride: number, data: number, query: number, out: number) => void
    } else {
      this.memory = new WebAssembly.Memory({ initial: 1 })
      this.dots = null
    }
  }

  /** Room for `rows` rows (and their results); rows already stored keep their place. */
  reserve(rows: number): void {
    if (rows <= this.capacity) return
    const needed = this.outAt(rows) + rows * 4
    const pages = Math.ceil(needed / 65_536) - this.memory.buffer.byteLength / 65_536
    if (pages > 0) this.memory.grow(pages)
    this.capacity = rows
  }

  /** The stored rows, `stride` bytes each (values past `dimensions` stay zero). */
  rowsView(): Int8Array {
    return new Int8Array(this.memory.buffer, this.dataAt, this.capacity * this.stride)
  }

  /** Integer dot products of the first `rows` rows with `query` (int16 values, `dimensions` of them). */
  scan(query: Int16Array, rows: number): Int32Array {
    const q = new Int16Array(this.memory.buffer, this.queryAt, this.stride)
    q.fill(0)
    q.set(query.subarray(0, this.dimensions))
    const outAt = this.outAt(this.capacity)
    if (this.dots) {
      this.dots(rows, this.stride, this.dataAt, this.queryAt, outAt)
      return new Int32Array(this.memory.buffer, outAt, rows)
    }
    const out = new Int32Array(this.memory.buffer, outAt, rows)
    const data = this.rowsView()
    const d = this.dimensions
    for (let row = 0; row < rows; row++) {
      const base = row * this.stride
      let sum = 0
      for (let i = 0; i < d; i++) sum += data[base + i]! * q[i]!
      out[row] = sum
    }
    return out
  }

  private outAt(capacity: number): number {
    return this.dataAt + capacity * this.stride
  }
}

/**
 * Levels of a query value: int16 keeps the query nearly as precise as the float it came from,
 * fewer where many dimensions could overflow an int32 sum.
 */
export function queryLevels(dimensions: number): number {
  return Math.min(32_767, Math.floor(0x7fffffff / (127 * Math.max(1, dimensions))))
}

/** `query` as int16 and the scale back to floats (0 for a zero query). */
export function quantizeQuery(query: Float32Array, levels = queryLevels(query.length)): { values: Int16Array; scale: number } {
  let max = 0
  for (let i = 0; i < query.length; i++) max = Math.max(max, Math.abs(query[i]!))
  const values = new Int16Array(query.length)
  if (!(max > 0) || !Number.isFinite(max)) return { values, scale: 0 }
  const inv = levels / max
  for (let i = 0; i < query.length; i++) values[i] = Math.round(query[i]! * inv)
  return { values, scale: max / levels }
}
