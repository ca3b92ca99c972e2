// The physical floor under a flat vector query: every stored Float32 has to be read once. Timed
// here with a tight summing loop over as many floats as the index holds, so a hybrid recall can be
// set against what this machine's memory bandwidth allows in the same run.

export interface VectorFloor {
  entities: number
  dimensions: number
  /** entities × dimensions × 4: what one query must read at least */
  bytesPerQuery: number
  /** fastest of several reads of that many floats (a floor is the best case, not the typical one) */
  scanMs: number
  scanGBps: number
}

/** Reads every value once; four sums keep the loop bound by loads, not by one add chain. */
function sumAll(data: Float32Array): number {
  let a = 0, b = 0, c = 0, d = 0
  const n = data.length - (data.length % 4)
  for (let i = 0; i < n; i += 4) {
    a += data[i]!
    b += data[i + 1]!
    c += data[i + 2]!
    d += data[i + 3]!
  }
  return a + b + c + d
}

export function measureVectorFloor(entities: number, dimensions: number, runs = 15): VectorFloor {
  const data = new Float32Array(entities * dimensions)
  // non-constant values, so nothing can be folded away
  for (let i = 0; i < data.length; i++) data[i] = ((i * 2654435761) >>> 0) / 4294967296 - 0.5
  // optimize the loop before timing it, on a small array so the warm-up stays cheap
  const small = data.subarray(0, Math.min(data.length, 4_096))
  let sink = 0
  for (let r = 0; r < 200; r++) sink += sumAll(small)
  let best = Infinity
  for (let r = 0; r < runs; r++) {
    const t = performance.now()
    sink += sumAll(data)
    best = Math.min(best, performance.now() - t)
  }
  if (Number.isNaN(sink)) throw new Error('vector floor scan produced NaN')
  const scanMs = Math.round(best * 1000) / 1000
  const bytesPerQuery = entities * dimensions * 4
  return { entities, dimensions, bytesPerQuery, scanMs, scanGBps: Math.round((bytesPerQuery / (best / 1000) / 1e9) * 10) / 10 }
}
