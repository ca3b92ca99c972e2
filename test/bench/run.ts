// `npm run bench`: every benchmark in one run, a table on the console and JSON under bench/results/,
// then docs/benchmarks.md regenerated from that JSON. `--quick` runs smaller sizes for CI;
// `--saturation` runs only the sync servers at saturation (minutes; not in CI; `--only=plain,file`
// and `--rates=700,1000` narrow it).
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { writeBenchDoc, BENCH_DOC, type BenchResults } from '../../scripts/bench-doc'
import { benchEngine } from './engine'
import { benchEmbed } from './embed'
import { defaultEmbedder } from '../support/default-embedder'

const quick = process.argv.includes('--quick')

/** Sections that failed; the others still run and are written, but the run exits non-zero. */
const failed: string[] = []

async function optional<T>(name: string, load: () => Promise<T>): Promise<T | { skipped: string }> {
  try {
    return await load()
  } catch (err) {
    console.error(`${name}: ${(err as Error).message}`)
    failed.push(name)
    return { skipped: (err as Error).message }
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--saturation')) {
    const { benchSaturation, printSaturation, saturationPick, writeSaturation } = await import('./saturation')
    const results = await benchSaturation(quick, (line) => console.log(line), saturationPick(process.argv))
    printSaturation(results)
    writeSaturation(results)
    return
  }
  const machine = { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown CPU', loadAverageAtStart: loadavg(), loadAverageAtEnd: [] as number[] }
  const results: Record<string, unknown> = { at: new Date().toISOString(), quick, node: process.version, machine }
  const sizes = quick ? [200, 1_000] : [1_000, 10_000]
  const engine = [...(await benchEngine(sizes)), ...(await benchEngine(sizes, await defaultEmbedder()))]
  results.engine = engine
  console.log('\nEngine (Node, fake-indexeddb; each observation: 3 entities, 2 relationships)')
  console.table(engine)
  const hub = await optional('hub entity', async () => {
    const { benchHub } = await import('./hub')
    return benchHub(quick ? [500] : [1_000, 5_000])
  })
  results.hub = hub
  console.log('\nWrites when one entity is named in every note (the memory\'s owner, say): the goal is a cost that does not grow with its notes (BM25, fake-indexeddb)')
  console.table(hub)
  const embed = await benchEmbed(quick ? 5_000 : 20_000)
  results.embed = embed
  console.log('\nDefault embedder (cairn-glove-100d, onnxruntime-web wasm, 1 thread)')
  console.table([embed])
  const index = await optional('entity index', async () => {
    const { benchEntityIndex } = await import('./entity-index')
    return benchEntityIndex(quick ? [1_000, 10_000] : [1_000, 10_000, 100_000])
  })
  results.entityIndex = index
  console.log('\nEntity index alone (Orama BM25 + flat vectors, WordNet glosses, default embedder)')
  console.dir(index, { depth: 4 })
  const sync = await optional('sync', async () => {
    const { benchSync } = await import('./sync')
    return benchSync(quick ? [200] : [1_000, 5_000])
  })
  results.sync = sync
  console.log('\nSync (two devices, N offline observations each, then connect through a real server on 127.0.0.1; median of 3)')
  console.table(sync)
  const updateCheck = await optional('update check', async () => {
    const { benchUpdateCheck } = await import('./update-check')
    return benchUpdateCheck(quick ? [1_000] : [1_000, 10_000])
  })
  results.updateCheck = updateCheck
  console.log('\nSync server: judging one small read_write update against a room of N observations (kept copy vs copying the room; ms)')
  console.table(updateCheck)
  const revoke = await optional('revoke', async () => {
    const { benchRevoke } = await import('./revoke')
    return benchRevoke(quick ? 5 : 30)
  })
  results.revoke = revoke
  console.log('\nRevoke: from the call to the sync server closing the live socket (4410) and refusing the token (goal under 100 ms)')
  console.table(revoke)
  const orgAccess = await optional('organization access', async () => {
    const { benchOrgAccess } = await import('./org-access')
    return benchOrgAccess(quick ? 5 : 30)
  })
  results.orgAccess = orgAccess
  console.log('\nOrganizations: from removing a member or making a memory private to the sync server closing the member\'s socket (4411 / 4412) and refusing its credential (goal under 100 ms)')
  console.table(orgAccess)
  const orgCutsRedis = await optional('organization cuts on Redis', async () => {
    const { benchOrgCutsRedis } = await import('./org-cuts-redis')
    return benchOrgCutsRedis(quick ? 5 : 30)
  })
  results.orgCutsRedis = orgCutsRedis
  console.log('\nOrganizations on 3 servers sharing Redis: from the cut on server A to servers B and C closing the member\'s socket and refusing its credential (goal under 100 ms)')
  console.table(orgCutsRedis)
  const yjsApply = await optional('yjs apply', async () => {
    const { benchYjsApply } = await import('./yjs-apply')
    return benchYjsApply(quick ? [1_000] : [1_000, 10_000])
  })
  results.yjsApply = yjsApply
  console.log('\nRemote updates: raw Yjs apply vs Cairn apply + re-derive, the same bytes (ms per update; separate = one update per message, merged = the batch as one)')
  console.table(yjsApply)
  const syncLoad = await optional('sync server load', async () => {
    const { loadSyncServer } = await import('../load/sync-server')
    const r = await loadSyncServer({ clients: 50, durationMs: quick ? 10_000 : 60_000, serverProcess: 'own' })
    if (r.problems.length) throw new Error(`the clients did not converge: ${r.problems.slice(0, 5).join('; ')}`)
    return r
  })
  results.syncLoad = syncLoad
  console.log('\nSync server with 50 clients on 127.0.0.1 (3 memories, read_write tokens, every 5th client drops offline now and then; server in its own process)')
  if ('writes' in syncLoad) {
    const { latencyMs, server } = syncLoad
    console.table([{ seconds: syncLoad.durationMs / 1000, writes: syncLoad.writes, offlineWrites: syncLoad.offlineWrites, writesPerSecond: syncLoad.updatesPerSecond, deliveriesPerSecond: syncLoad.deliveriesPerSecond, latencyP50Ms: latencyMs.p50, latencyP95Ms: latencyMs.p95, convergeMs: syncLoad.convergeMs, persisted: syncLoad.persisted, refusals: syncLoad.refusals, serverPeakRssMiB: server.peakRssMiB, serverLoopDelayP99Ms: server.loopDelayMs.p99, problems: syncLoad.problems.length }])
  }
  const syncCluster = await optional('sync servers on Redis', async () => {
    const { benchSyncCluster } = await import('./sync-cluster')
    return benchSyncCluster(quick)
  })
  results.syncCluster = syncCluster
  console.log(`\nSync servers side by side: 60 clients over 3 memories, 2 writes/s each, for ${quick ? 5 : 20} s, through a round-robin TCP balancer on 127.0.0.1 (Redis with appendfsync always; latency = write to arrival at another client; loop = the worst server's event-loop delay)`)
  if ('rows' in syncCluster) console.table(syncCluster.rows)
  const hostile = await optional('hostile server', async () => {
    const { benchHostileServer } = await import('./hostile-server')
    return benchHostileServer(quick)
  })
  results.hostileServer = hostile
  console.log('\nSync server under authenticated hostile load (server in its own process; event-loop delay over the run, ms) and the cost of storing each update before relaying it (writer to watcher, one small write at a time)')
  if ('load' in hostile) {
    console.table(hostile.load)
    console.table(hostile.persist)
  }
  const rederive = await optional('re-derive', async () => {
    const { benchRederive } = await import('./rederive')
    const held = quick ? [100, 1_000] : [100, 1_000, 10_000]
    return [...(await benchRederive(held)), ...(await benchRederive(held, 100, await defaultEmbedder()))]
  })
  results.rederive = rederive
  console.log('\nRe-derivation after a merge (100 observations from a peer, applied through the sync document, onto a memory already holding N)')
  console.table(rederive)
  const aliasAccept = await optional('alias accept', async () => {
    const { benchAliasAccept } = await import('./alias-accept')
    return benchAliasAccept(quick ? [1_000] : [1_000, 10_000])
  })
  results.aliasAccept = aliasAccept
  console.log('\nAccepting a merge onto a memory holding N observations (the variant named by 20 notes; median of 9 accepts, fake-indexeddb)')
  console.table(aliasAccept)
  const browser = await optional('browser engine', async () => {
    const { benchBrowserEngine } = await import('./browser-engine')
    return benchBrowserEngine(quick ? [1_000] : [1_000, 10_000, 100_000])
  })
  results.browserEngine = browser
  console.log('\nEngine in Chromium (real IndexedDB, module worker, onnxruntime-web; cold open = open + first recall, median of 3 fresh workers; floor = one tight read of the stored vector bytes in the same worker)')
  console.table(browser)
  if (Array.isArray(browser)) {
    results.browserEngineGoals = browserGoals(browser)
    console.log('Goals in Chromium (hybrid rows; recorded in bench.json, they do not fail the run: figures vary with the load)')
    console.table(results.browserEngineGoals)
  }
  const app = await optional('app', async () => {
    const { benchApp, printAppBench } = await import('./app')
    const r = await benchApp(quick ? 1 : 3)
    printAppBench(r)
    return r
  })
  results.app = app
  const captureCost = await optional('capture', async () => {
    const { benchCapture, printCaptureBench } = await import('./capture')
    const r = await benchCapture()
    printCaptureBench(r)
    return r
  })
  results.capture = captureCost
  // a missed goal keeps its figures in the JSON and still fails the run
  if ('goal' in captureCost && (!captureCost.goal.met || !captureCost.newNames.met || captureCost.recall.some((v) => v.misses.length))) failed.push('capture goal')
  const graphView = await optional('graph view', async () => {
    const { benchGraphView } = await import('./graph-view')
    return benchGraphView(quick ? 1_000 : 5_000)
  })
  results.graphView = graphView
  console.log('\nGraph view in headless Chromium (--disable-gpu: WebGL on SwiftShader, software); baseline = layout on the main thread, all drawn while moving; app = the shipped scene')
  console.table(graphView)
  const peers = await optional('peers', async () => {
    const { benchPeers } = await import('./peers/index')
    const { writeLatencyChart } = await import('./chart')
    const out = await benchPeers(quick ? [1_000] : [1_000, 10_000, 100_000])
    const series = new Map<string, Array<{ size: number; ms: number }>>()
    for (const r of out.rows) {
      if (r.operation === 'ping') continue
      const name = `${r.system} ${r.operation}`
      series.set(name, [...(series.get(name) ?? []), { size: r.entities, ms: r.p50Ms }])
    }
    mkdirSync('bench/results', { recursive: true })
    writeLatencyChart('bench/results/latency.svg', [...series].map(([name, points]) => ({ name, points })), 'p50 latency against store size (entities)')
    return out
  })
  results.peers = peers
  console.log('\nPeers on one workload (WordNet nouns; p50/p95 ms; ratios = peer p50 / Cairn p50; chart: bench/results/latency.svg)')
  if ('rows' in peers) {
    console.table(peers.rows)
    console.table(peers.ratios)
    console.table(peers.samples)
    console.log('Vector floor: one hybrid query reads entities x dims x 4 bytes; floor = a tight loop reading that many float32 values in this process')
    console.table(peers.floors)
    for (const note of peers.notes) console.log(`note: ${note}`)
  }
  const mcp = await optional('mcp', async () => {
    const { benchMcp } = await import('./mcp')
    return benchMcp(quick ? [1_000] : [1_000, 10_000])
  })
  results.mcp = mcp
  console.log('\nAgent tool calls: recall round trip through the MCP server (official SDK client; stdio and Streamable HTTP on 127.0.0.1) vs dispatchTool in-process')
  console.table(mcp)
  const pkg = await optional('package', async () => {
    const { benchDurable, benchMcpImport, benchPackageSize } = await import('./package')
    const embedder = await defaultEmbedder()
    return { size: benchPackageSize(), durable: await benchDurable(quick ? [1_000] : [10_000], embedder), mcpImport: await benchMcpImport(quick ? [1_000] : [10_000], embedder) }
  })
  results.package = pkg
  console.log('\nThe package: tarball and a browser project\'s install (MB); MCP writes and restart on the durable Node store (hybrid); importing an MCP memory server file')
  if ('size' in pkg) {
    console.table([pkg.size])
    console.table(pkg.durable)
    console.table(pkg.mcpImport)
  }
  results.failedSections = failed
  machine.loadAverageAtEnd = loadavg()
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/bench.json', JSON.stringify(results, null, 2))
  console.log('wrote bench/results/bench.json')
  writeBenchDoc(results as unknown as BenchResults)
  console.log(`wrote ${BENCH_DOC}`)
  if (failed.length) {
    console.error(`${failed.length} section(s) failed: ${failed.join(', ')}`)
    process.exitCode = 1
  }
}

/** The goals for the engine in Chromium, against the hybrid rows of this run. */
function browserGoals(rows: import('./browser-engine').BrowserEngineRow[]): { goal: string; observations: number; value: number; limit: number; met: boolean }[] {
  const hybrid = (n: number) => rows.find((r) => r.recall === 'hybrid' && r.observations === n)
  const out: { goal: string; observations: number; value: number; limit: number; met: boolean }[] = []
  const check = (goal: string, n: number, value: number | undefined, limit: number) => {
    if (value !== undefined) out.push({ goal, observations: n, value, limit, met: value < limit })
  }
  check('cold open ms', 10_000, hybrid(10_000)?.coldOpenMs, 600)
  check('cold open ms', 100_000, hybrid(100_000)?.coldOpenMs, 2_000)
  check('recall p50 ms', 100_000, hybrid(100_000)?.recallP50Ms, 15)
  check('recall p50 / floor', 100_000, hybrid(100_000)?.recallOverFloor, 2)
  return out
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
