// Best-k selection over scored slots without sorting them all: a bounded heap whose root is
// the current worst entry. Order: higher score first, then the smaller key, so ties are stable.

export interface Scored {
  key: string
  score: number
}

/** A ranked slot: its key and score, and where it was among the scores ranked. */
export interface RankedSlot extends Scored {
  slot: number
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
  return rankSlots(scores, n, k, keyOf).map(({ key, score }) => ({ key, score }))
}

/** `topKOf` with each hit's slot: a caller that scores slots needs no map back from keys. */
export function rankSlots(scores: ArrayLike<number>, n: number, k: number, keyOf: (slot: number) => string): RankedSlot[] {
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
  const out: RankedSlot[] = []
  for (let i = 0; i < size; i++) out.push({ key: keyOf(slots[i]!), score: values[i]!, slot: slots[i]! })
  return out.sort(compareRanked)
}

/**
 * The `k` best slots by round(weights.text · text + weights.vector · similarity), as `topKOf`
 * over every slot fused would give them, without fusing every slot: the k best by similarity
 * alone bound the k-th fused score from below (text only adds, weights are not negative), and
 * only slots that can reach that bound are fused (the text hits, and the few close by
 * similarity). `round` is monotone, to steps of at most `1 / 1e9`; `scratch` holds n scores
 * when the bound does not hold.
 */
export function topKFused(similarity: ArrayLike<number>, n: number, k: number, weights: { text: number; vector: number }, text: ReadonlyMap<number, number>, keyOf: (slot: number) => string, round: (score: number) => number, scratch: Float64Array): Scored[] {
  const { text: wt, vector: wv } = weights
  const fuse = (s: number, t: number) => round(wt * t + wv * similarity[s]!)
  const bySimilarity = wv > 0 ? topKOf(similarity, n, k, keyOf) : []
  if (bySimilarity.length < k) {
    // fewer than k alike at all: every slot may count
    for (let s = 0; s < n; s++) scratch[s] = fuse(s, 0)
    for (const [s, t] of text) scratch[s] = fuse(s, t)
    return topKOf(scratch, n, k, keyOf)
  }
  const floor = round(wv * bySimilarity[k - 1]!.score)
  // below this similarity a slot rounds to less than the floor (a whole step of margin)
  const least = (floor - 1e-9) / wv
  const slots: number[] = []
  for (let s = 0; s < n; s++) if (similarity[s]! >= least && !text.has(s) && fuse(s, 0) >= floor) slots.push(s)
  for (const s of text.keys()) slots.push(s)
  const scores = Float64Array.from(slots, (s) => fuse(s, text.get(s) ?? 0))
  return topKOf(scores, slots.length, k, (i) => keyOf(slots[i]!))
}
