// How ranked lists of one recall merge into one score per candidate (a note index's BM25, soft word
// match and vector nearness): a weighted sum of the scores, the same sum with each list stretched
// to [0, 1] over the candidates, or reciprocal-rank fusion of the lists' orders.

/**
 * `sum`: Σ weight × score, the scores as each list gives them. `scaled`: the same with each list's
 * scores first mapped onto [0, 1] over the candidates (its lowest 0, its highest 1). `rank`:
 * reciprocal-rank fusion, Σ weight / (k + rank) over the lists that hold the candidate (a score
 * above 0), rank 1 the list's best; a score ≤ 0 is no place in that list.
 */
export interface Fusion {
  rule: 'sum' | 'scaled' | 'rank'
  /** Reciprocal-rank constant: a larger k flattens the difference between the first places. */
  k: number
}

/** One ranked list: its weight and each candidate's score in it (same order as the candidates). */
export interface FusedList {
  weight: number
  scores: ArrayLike<number>
}

/**
 * Each candidate's fused score. `keyOf(i)` orders candidates of equal score within a list (for
 * `rank`), so the fusion does not depend on the order the candidates came in.
 */
export function fuse(lists: readonly FusedList[], n: number, fusion: Fusion, keyOf: (i: number) => string): Float64Array {
  const out = new Float64Array(n)
  for (const list of lists) {
    if (!list.weight) continue
    const s = list.scores
    if (fusion.rule === 'sum') {
      for (let i = 0; i < n; i++) out[i] = out[i]! + list.weight * s[i]!
    } else if (fusion.rule === 'scaled') {
      let low = Infinity
      let high = -Infinity
      for (let i = 0; i < n; i++) {
        if (s[i]! < low) low = s[i]!
        if (s[i]! > high) high = s[i]!
      }
      const span = high - low
      if (span > 0) for (let i = 0; i < n; i++) out[i] = out[i]! + (list.weight * (s[i]! - low)) / span
    } else {
      const held: number[] = []
      for (let i = 0; i < n; i++) if (s[i]! > 0) held.push(i)
      held.sort((a, b) => s[b]! - s[a]! || (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
      held.forEach((i, r) => {
        out[i] = out[i]! + list.weight / (fusion.k + r + 1)
      })
    }
  }
  return out
}
