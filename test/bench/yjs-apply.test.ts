// The raw-Yjs-against-Cairn apply bench at a small size: it applies the same updates to both
// documents (it throws if they end up different or the engine misses one) and accounts for
// Cairn's time step by step.
import { describe, expect, it } from 'vitest'
import { benchYjsApply } from './yjs-apply'

describe('benchYjsApply', () => {
  it('times both sides on the same updates and splits the engine side', async () => {
    const rows = await benchYjsApply([200], { batch: 20, runs: 1 })
    expect(rows.map((r) => [r.held, r.batch, r.mode])).toEqual([[200, 20, 'separate'], [200, 20, 'merged']])
    for (const r of rows) {
      expect(r.rawMsPerUpdate).toBeGreaterThan(0)
      // the engine side includes a Y.applyUpdate of its own, and then storage and re-derivation
      expect(r.cairnMsPerUpdate).toBeGreaterThan(r.rawMsPerUpdate)
      const split = r.split!
      expect(split.rederive).toBeGreaterThan(0)
      expect(split.storage).toBeGreaterThan(0)
      expect(split.index).toBeGreaterThan(0)
      // the measured steps run one after another inside the total, never beside it
      expect(split.docApply + split.rederive + split.storage + split.index).toBeLessThanOrEqual(r.cairnMsPerUpdate * 1.01)
    }
    // one IndexedDB transaction per update costs more than one for the whole batch
    expect(rows[0]!.split!.storage).toBeGreaterThan(rows[1]!.split!.storage)
  }, 30_000)
})
