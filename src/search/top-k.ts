// Best-k selection over scored slots without sorting them all: a bounded heap whose root is
// the current worst entry. Order: higher score first, then the smaller key, so ties are stable.

export interface Scored {
  key: string
  score: number
}

/** True when `a` ranks before `b`. */
export function ranksBefore(a: Scored, b: Scored): boolean {
  return a.score > b.score || (a.score === b.score && a.key < b.key)
}

export function compareRanked(a: Scored, b: Scored): number {
  return ranksBefore(a, b) ? -1 : ranksBefore(b, a) ? 1 : 0
}

/** The `k` best of `n` slots with a positive score, best first. */
export function topK(n: number, k: number, scoreOf: (slot: number) => number, keyOf: (slot: number) => string): Scored[] {
  const scores = new Float64Array(n)
  for (let slot = 0; slot < n; slot++) scores[slot] = scoreOf(slot)
  return topKOf(scores, n, k, keyOf)
}

/**
 * `topK` over scores already in an array. The heap holds slots and scores as numbers and a
 * key is read only to break a tie, so passing over 100,000 slots costs a comparison each.
 */
export function topKOf(scores: ArrayLike<number>, n: number, k: number, keyOf: (slot: number) => string): Scored[] {
  if (k <= 0) return []
  const slots = new Int32Array(k)
  const values = new Float64Array(k)
  let size = 0
  // true when slot a (score x) ranks before slot b (score y)
  const before = (x: number, a: number, y: number, b: number) => x > y || (x === y && keyOf(a) < keyOf(b))
  const swap = (i: number, j: number) => {
    const s = slots[i]!
    slots[i] = slots[j]!
    slots[j] = s
    const v = values[i]!
    values[i] = values[j]!
    values[j] = v
  }
  for (let slot = 0; slot < n; slot++) {
    const score = scores[slot]!
    if (!(score > 0)) continue
    if (size === k) {
      // the root is the worst kept: most slots stop at this comparison
      if (score < values[0]! || !before(score, slot, values[0]!, slots[0]!)) continue
      slots[0] = slot
      values[0] = score
      for (let i = 0; ;) {
        const l = 2 * i + 1
        const r = l + 1
        let worst = i
        if (l < size && before(values[worst]!, slots[worst]!, values[l]!, slots[l]!)) worst = l
        if (r < size && before(values[worst]!, slots[worst]!, values[r]!, slots[r]!)) worst = r
        if (worst === i) break
        swap(worst, i)
        i = worst
      }
    } else {
      slots[size] = slot
      values[size] = score
      for (let i = size++; i > 0; ) {
        const parent = (i - 1) >> 1
        if (!before(values[parent]!, slots[parent]!, values[i]!, slots[i]!)) break
        swap(parent, i)
        i = parent
      }
    }
  }
  const out: Scored[] = []
  for (let i = 0; i < size; i++) out.push({ key: keyOf(slots[i]!), score: values[i]! })
  return out.sort(compareRanked)
}
