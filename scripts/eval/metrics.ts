// Ranking metrics with binary relevance.

/** Share of the relevant items found in the first k results. */
export function recallAtK(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  if (relevant.size === 0) return 0
  let found = 0
  for (const key of ranked.slice(0, k)) if (relevant.has(key)) found++
  return found / relevant.size
}

/** DCG of the first k results over the DCG of a perfect ranking (gain 1 per relevant item). */
export function ndcgAtK(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  let dcg = 0
  ranked.slice(0, k).forEach((key, i) => {
    if (relevant.has(key)) dcg += 1 / Math.log2(i + 2)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2)
  return ideal > 0 ? dcg / ideal : 0
}

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0
}

/** 95% paired-bootstrap interval of mean(b - a) over queries, with a seeded generator. */
export function pairedBootstrap(a: readonly number[], b: readonly number[], resamples = 2000, seed = 1): { low: number; high: number } {
  const n = a.length
  if (n === 0 || n !== b.length) return { low: 0, high: 0 }
  const diff = a.map((x, i) => b[i]! - x)
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const means: number[] = []
  for (let r = 0; r < resamples; r++) {
    let sum = 0
    for (let i = 0; i < n; i++) sum += diff[Math.floor(next() * n)]!
    means.push(sum / n)
  }
  means.sort((x, y) => x - y)
  return { low: means[Math.floor(0.025 * resamples)]!, high: means[Math.floor(0.975 * resamples)]! }
}
