// `npx tsx test/bench/peers/run-alone.ts [--quick]`: the peer comparison alone (quick: 1k and 10k
// entities; full: 1k, 10k and 100k), a table on the console, JSON and an SVG chart under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs'
import { writeLatencyChart } from '../chart'
import { benchPeers } from './index'

const quick = process.argv.includes('--quick')

async function main(): Promise<void> {
  // Up to 10k entities Cairn is filled one write per note; at 100k the notes are imported in one
  // transaction (see cairn.ts) and mcp-memory's file is written directly (see mcp-memory.ts).
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
  const t0 = performance.now()
  const result = await benchPeers(sizes, { log: (l) => console.error(l) })
  console.log('\nPeers: query latency (ms) per system and store size (entities)')
  console.table(result.rows)
  console.log('Ratios (peer p50 / Cairn p50)')
  console.table(result.ratios)
  console.log('Vector floor: bytes one flat query must read, the time to read them once here, and Cairn hybrid recall against it')
  console.table(result.floors)
  console.log('What each returns for the sample queries')
  console.table(result.samples.map((s) => ({ system: s.system, store: s.entitiesInStore, kind: s.query.kind, query: s.query.text.slice(0, 40), entities: s.entities, relations: s.relations })))
  for (const n of result.notes) console.log(`- ${n}`)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/peers.json', JSON.stringify({ at: new Date().toISOString(), quick, node: process.version, ...result }, null, 2))
  const series = [...new Set(result.rows.filter((r) => r.operation === 'search').map((r) => r.system))].map((name) => ({
    name,
    points: result.rows.filter((r) => r.system === name && r.operation === 'search').map((r) => ({ size: r.entities, ms: r.p50Ms })),
  }))
  writeLatencyChart('bench/results/peers.svg', series, 'search p50 vs store size')
  console.log(`wrote bench/results/peers.json and peers.svg in ${Math.round((performance.now() - t0) / 1000)} s`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
