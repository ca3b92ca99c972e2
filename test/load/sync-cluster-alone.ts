// `npx tsx test/load/sync-cluster-alone.ts [file|redis] [servers=3] [clients=60] [durationMs=10000] [--faults]`:
// one cluster load run on its own, figures on the console.
import { loadSyncCluster } from './sync-cluster'

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const [backend = 'redis', servers = '3', clients = '60', durationMs = '10000'] = args.filter((a) => !a.startsWith('--'))
  const faults = args.includes('--faults')
  const ms = Number(durationMs)
  const r = await loadSyncCluster({
    backend: backend === 'file' ? 'file' : 'redis', servers: Number(servers), clients: Number(clients), memories: 3, durationMs: ms,
    killServerAtMs: faults ? ms * 0.3 : undefined, restartRedisAtMs: faults ? ms * 0.6 : undefined, checkRevoke: faults,
    log: (l) => console.error(l),
  })
  console.dir(r, { depth: 4 })
  if (r.problems.length) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
