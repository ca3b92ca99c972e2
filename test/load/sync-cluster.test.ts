// Three sync-server processes sharing rooms through one Redis, 60 y-websocket clients behind a
// round-robin balancer writing for a few seconds: one server is SIGKILLed (its clients move to
// the others) and Redis is SIGKILLed and restarted mid-run. Nothing a peer had received is
// missing from Redis after either fault; at the end every client and a fresh server's load hold
// every write; a revoke closes the token's sockets on all 3 servers in under 100 ms (measured
// where it is enforced, by each server's clock, median of three; how soon this test process
// notices the closes is reported beside it).
import { describe, expect, it } from 'vitest'
import { loadSyncCluster } from './sync-cluster'

describe('sync servers sharing rooms through Redis, under load and faults', () => {
  it('3 servers, 60 clients: a server killed and Redis restarted lose nothing acknowledged', async () => {
    const r = await loadSyncCluster({
      backend: 'redis', servers: 3, clients: 60, memories: 3, durationMs: 8_000,
      killServerAtMs: 2_500, restartRedisAtMs: 5_000, redisDownMs: 1_500, checkRevoke: true,
      convergeTimeoutMs: 30_000, log: (l) => console.info(l),
    })
    console.info(`cluster load: ${r.writes} writes (${r.writesPerSecond}/s), ${r.deliveriesPerSecond} deliveries/s, latency p50 ${r.latencyMs.p50} ms p95 ${r.latencyMs.p95} ms, converged in ${r.convergeMs} ms, revokes enforced by the 3 servers in ${r.revokeTrials?.map((t) => t.servers.join('/')).join(', ')} ms (seen by the clients in ${r.revokeTrials?.map((t) => t.clients.join('/')).join(', ')} ms)`)
    expect(r.problems).toEqual([])
    expect(r.refusals).toBe(0)
    expect(r.writes).toBeGreaterThan(100)
    expect(r.persisted).toBe(r.writes)
    // both faults happened while peers had writes acknowledged, and Redis held every one
    expect(r.faults.map((f) => f.fault)).toEqual(['SIGKILL of server 0', 'SIGKILL and restart of Redis'])
    for (const f of r.faults) {
      expect(f.acknowledged).toBeGreaterThan(0)
      expect(f.missing).toBe(0)
    }
    expect(r.clientsOnKilledServer).toBeGreaterThan(0)
    // each revoke closed the token's sockets on all 3 servers within 100 ms of the call (on each
    // server's clock); the median of three, because this machine's other work can stall any one
    expect(r.revokeTrials).toHaveLength(3)
    const worst = r.revokeTrials!.map((t) => Math.max(...t.servers))
    for (const t of r.revokeTrials!) expect(t.servers.every(Number.isFinite) && t.servers.length === 3).toBe(true)
    expect([...worst].sort((x, y) => x - y)[1]).toBeLessThan(100)
  }, 180_000)
})
