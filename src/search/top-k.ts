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
  if (k <= 0) return []
  const heap: Scored[] = []
  for (let slot = 0; slot < n; slot++) {
    const score = scoreOf(slot)
    if (!(score > 0)) continue
    if (heap.length === k) {
      const worst = heap[0]!
      // cheap reject before building the key string comparison
      if (score < worst.score) continue
      const entry = { key: keyOf(slot), score }
      if (!ranksBefore(entry, worst)) continue
      heap[0] = entry
      siftDown(heap, 0)
    } else {
      heap.push({ key: keyOf(slot), score })
      siftUp(heap, heap.length - 1)
    }
  }
  return heap.sort(compareRanked)
}

// min-heap by rank: the parent ranks after (is worse than) its children
function siftUp(heap: Scored[], i: number): void {
  while (i > 0) {
    const parent = (i - 1) >> 1
    if (!ranksBefore(heap[parent]!, heap[i]!)) break
    ;[heap[parent], heap[i]] = [heap[i]!, heap[parent]!]
    i = parent
  }
}

function siftDown(heap: Scored[], i: number): void {
  for (;;) {
    const l = 2 * i + 1
    const r = l + 1
    let worst = i
    if (l < heap.length && ranksBefore(heap[worst]!, heap[l]!)) worst = l
    if (r < heap.length && ranksBefore(heap[worst]!, heap[r]!)) worst = r
    if (worst === i) return
    ;[heap[worst], heap[i]] = [heap[i]!, heap[worst]!]
    i = worst
  }
}
