// `npx tsx test/load/sync-server-alone.ts [clients=50] [durationMs=60000] [memories=3] [--full] [--same-process]`:
// the sync server load run on its own, figures on the console and JSON under bench/results/.
// `--full` gives every client a full token, which the server does not check update by update;
// `--same-process` runs the server in the clients' process (by default it gets its own).
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadSyncServer } from './sync-server'

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const tier = args.includes('--full') ? 'full' : 'read_write'
  const serverProcess = args.includes('--same-process') ? 'same' : 'own'
  const [clients = 50, durationMs = 60_000, memories = 3] = args.filter((a) => !a.startsWith('--')).map(Number)
  // an overloaded server may take long to drain what queued up: allow it as long as the run itself
  const convergeTimeoutMs = Math.max(30_000, durationMs)
  const result = await loadSyncServer({ clients, durationMs, memories, tier, serverProcess, convergeTimeoutMs, log: (l) => console.error(l) })
  const { problems, latencyMs, server, clientsProcess, ...rest } = result
  console.log(`\nSync server: ${clients} ${tier} clients over ${memories} memories for ${durationMs} ms (127.0.0.1; server in ${serverProcess === 'own' ? 'its own process' : 'the clients\' process'})`)
  console.table([rest])
  console.log('Write-to-arrival latency on other clients, ms')
  console.table([latencyMs])
  console.log('Processes over the writing phase (MiB; event-loop delay ms)')
  const row = ({ loopDelayMs, ...m }: typeof clientsProcess) => ({ ...m, loopP50: loopDelayMs.p50, loopP99: loopDelayMs.p99, loopMax: loopDelayMs.max })
  console.table({ server: row(server), clients: row(clientsProcess) })
  console.log(problems.length ? `problems:\n- ${problems.join('\n- ')}` : 'every client and the stored rooms hold exactly what was written')
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(`bench/results/sync-load-${tier}-${serverProcess}.json`, JSON.stringify({ at: new Date().toISOString(), node: process.version, ...result }, null, 2))
  if (problems.length) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
