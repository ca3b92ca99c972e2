// Per-slot score arrays that a search fills and reads synchronously, kept between searches:
// Chromium was slower making two 100,000-long arrays per query.
export class ScoreScratch {
  private readonly rows: Float32Array[] = []

  /** Array `which`, zeroed over its first `n` slots; valid until the next call for `which`. */
  zeroed(which: number, n: number): Float32Array {
    let rows = this.rows[which]
    if (!rows || rows.length < n) rows = this.rows[which] = new Float32Array(Math.max(n, (rows?.length ?? 0) * 2))
    else rows.fill(0, 0, n)
    return rows
  }
}
