// Fifty real y-websocket clients on one sync server over 127.0.0.1, for a few seconds: every
// client of a memory ends up with exactly what was written to it, and so does the server's
// store once reopened. The full minute runs as `npx tsx test/load/sync-server-alone.ts 50 60000`.
import { describe, expect, it } from 'vitest'
import { loadSyncServer, type SyncLoadResult } from './sync-server'

function expectNothingLost(r: SyncLoadResult): void {
  expect(r.problems).toEqual([])
  expect(r.refusals).toBe(0)
  expect(r.serverWarnings).toBe(0)
  expect(r.convergeMs).not.toBeNull()
  // the run did what it says: writes, some of them offline, seen by other clients, all stored
  expect(r.offlineCycles).toBeGreaterThan(0)
  expect(r.offlineWrites).toBeGreaterThan(0)
  expect(r.latencyMs.samples).toBeGreaterThan(r.writes)
  expect(r.persisted).toBe(r.writes)
}

describe('sync server under load', () => {
  it('50 clients over 3 memories, some dropping offline, all converge and nothing is lost', async () => {
    const r = await loadSyncServer({ clients: 50, memories: 3, durationMs: 7_000, convergeTimeoutMs: 20_000 })
    console.info(`sync load: ${r.writes} writes (${r.updatesPerSecond}/s of ${r.targetUpdatesPerSecond}, ${r.offlineWrites} offline), ${r.deliveries} deliveries, latency p50 ${r.latencyMs.p50} ms p95 ${r.latencyMs.p95} ms, converged in ${r.convergeMs} ms, peak RSS ${r.server.peakRssMiB} MiB`)
    expectNothingLost(r)
    expect(r.writes).toBeGreaterThan(100)
    expect(r.server.separate).toBe(false)
  }, 60_000)

  it('with the server in a process of its own, measured apart from the clients', async () => {
    const r = await loadSyncServer({ clients: 10, memories: 2, durationMs: 2_000, writeIntervalMs: 200, offlineEvery: 3, serverProcess: 'own', convergeTimeoutMs: 15_000 })
    expectNothingLost(r)
    expect(r.server.separate).toBe(true)
    expect(r.server.peakRssMiB).toBeGreaterThan(0)
    // a separate process: its heap is not the clients' heap
    expect(r.server.endHeapUsedMiB).not.toBe(r.clientsProcess.endHeapUsedMiB)
  }, 60_000)
})
