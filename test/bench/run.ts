// `npm run bench`: every benchmark in one run, a table on the console and JSON under bench/results/.
// `--quick` runs smaller sizes for CI.
import { mkdirSync, writeFileSync } from 'node:fs'
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
  const results: Record<string, unknown> = { at: new Date().toISOString(), quick, node: process.version }
  const sizes = quick ? [200, 1_000] : [1_000, 10_000]
  const engine = [...(await benchEngine(sizes)), ...(await benchEngine(sizes, await defaultEmbedder()))]
  results.engine = engine
  console.log('\nEngine (Node, fake-indexeddb; each observation: 3 entities, 2 relationships)')
  console.table(engine)
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
  const rederive = await optional('re-derive', async () => {
    const { benchRederive } = await import('./rederive')
    const held = quick ? [100, 1_000] : [100, 1_000, 10_000]
    return [...(await benchRederive(held)), ...(await benchRederive(held, 100, await defaultEmbedder()))]
  })
  results.rederive = rederive
  console.log('\nRe-derivation after a merge (100 observations from a peer, applied through the sync document, onto a memory already holding N)')
  console.table(rederive)
  const browser = await optional('browser engine', async () => {
    const { benchBrowserEngine } = await import('./browser-engine')
    return benchBrowserEngine(quick ? [1_000] : [1_000, 10_000])
  })
  results.browserEngine = browser
  console.log('\nEngine in Chromium (real IndexedDB, module worker, onnxruntime-web; cold open = open + first recall, median of 3 fresh workers)')
  console.table(browser)
  const peers = await optional('peers', async () => {
    const { benchPeers } = await import('./peers/index')
    const { writeLatencyChart } = await import('./chart')
    const out = await benchPeers(quick ? [1_000] : [1_000, 3_000, 10_000])
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
  }
  results.failedSections = failed
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/bench.json', JSON.stringify(results, null, 2))
  console.log('wrote bench/results/bench.json')
  if (failed.length) {
    console.error(`${failed.length} section(s) failed: ${failed.join(', ')}`)
    process.exitCode = 1
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
