import { describe, expect, it } from 'vitest'
import { benchMcp } from './mcp'

describe('benchMcp', () => {
  it('times recall in-process, over stdio and over HTTP on one memory, and stops its servers', async () => {
    const pids: number[] = []
    const rows = await benchMcp([60], { onServer: (pid) => pids.push(pid) })
    expect(pids).toHaveLength(2)
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/)
    expect(rows.map((r) => r.transport)).toEqual(['in-process', 'stdio', 'http'])
    const [base, stdio, http] = rows as [typeof rows[0], typeof rows[0], typeof rows[0]]
    for (const r of rows) {
      expect(r).toMatchObject({ observations: 60, queries: 100 })
      expect(r.entities).toBeGreaterThan(30)
      expect(r.p50Ms).toBeGreaterThan(0)
      expect(r.p95Ms).toBeGreaterThanOrEqual(r.p50Ms)
      expect(r.startMs).toBeGreaterThan(0)
    }
    // the server opened the memory the in-process run saved: same graph, same answers, same bytes
    expect(stdio.entities).toBe(base.entities)
    expect(stdio.payloadP50Bytes).toBe(base.payloadP50Bytes)
    expect(http.payloadP50Bytes).toBe(base.payloadP50Bytes)
    expect(stdio.vsInProcessP50).toBeCloseTo(stdio.p50Ms / base.p50Ms, 1)
    expect(http.vsInProcessP50).toBeCloseTo(http.p50Ms / base.p50Ms, 1)
  }, 60_000)
})
