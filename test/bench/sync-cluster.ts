// Sync servers side by side on one workload: 1 server on its data directory, 1 server on Redis,
// 3 servers on one Redis behind a round-robin balancer; the same clients, memories and write
// rate for each. Writes/s, deliveries/s, write-to-peer latency, and the servers' event-loop delay.
import { redisAvailable } from '../support/redis'
import { loadSyncCluster, type ClusterLoadResult } from '../load/sync-cluster'

export interface ClusterBenchRow {
  setup: string
  clients: number
  seconds: number
  writes: number
  writesPerSecond: number
  deliveriesPerSecond: number
  latencyP50Ms: number
  latencyP95Ms: number
  convergeMs: number | null
  /** Worst server's event-loop delay over the writing phase. */
  serverLoopP50Ms: number
  serverLoopP99Ms: number
  serverLoopMaxMs: number
  serverPeakRssMiB: number
  problems: number
}

function row(setup: string, r: ClusterLoadResult): ClusterBenchRow {
  const worst = (k: 'p50' | 'p99' | 'max') => Math.max(...r.serverLoopDelayMs.map((d) => d[k]))
  return {
    setup,
    clients: r.clients,
    seconds: r.durationMs / 1000,
    writes: r.writes,
    writesPerSecond: r.writesPerSecond,
    deliveriesPerSecond: r.deliveriesPerSecond,
    latencyP50Ms: r.latencyMs.p50,
    latencyP95Ms: r.latencyMs.p95,
    convergeMs: r.convergeMs,
    serverLoopP50Ms: worst('p50'),
    serverLoopP99Ms: worst('p99'),
    serverLoopMaxMs: worst('max'),
    serverPeakRssMiB: Math.max(...r.serverPeakRssMiB),
    problems: r.problems.length,
  }
}

export async function benchSyncCluster(quick: boolean): Promise<{ rows: ClusterBenchRow[]; runs: ClusterLoadResult[] }> {
  if (!redisAvailable()) throw new Error('redis-server is not installed (apt-get install redis-server)')
  const workload = { clients: 60, memories: 3, durationMs: quick ? 5_000 : 20_000, writeIntervalMs: 500 }
  const setups = [
    { setup: '1 server, file store', backend: 'file' as const, servers: 1 },
    { setup: '1 server, Redis', backend: 'redis' as const, servers: 1 },
    { setup: '3 servers, one Redis', backend: 'redis' as const, servers: 3 },
  ]
  const rows: ClusterBenchRow[] = []
  const runs: ClusterLoadResult[] = []
  for (const s of setups) {
    const r = await loadSyncCluster({ ...workload, backend: s.backend, servers: s.servers })
    if (r.problems.length) throw new Error(`${s.setup}: ${r.problems.slice(0, 3).join('; ')}`)
    runs.push(r)
    rows.push(row(s.setup, r))
  }
  return { rows, runs }
}

// `npx tsx test/bench/sync-cluster.ts [--quick]`: this section alone.
if (process.argv[1]?.endsWith('sync-cluster.ts')) {
  benchSyncCluster(process.argv.includes('--quick')).then(({ rows }) => console.table(rows), (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
