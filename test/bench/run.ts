// `npm run bench`: every benchmark in one run, a table on the console and JSON under bench/results/.
// `--quick` runs smaller sizes for CI.
import { mkdirSync, writeFileSync } from 'node:fs'
import { benchEngine } from './engine'

const quick = process.argv.includes('--quick')

async function optional<T>(name: string, load: () => Promise<T>): Promise<T | { skipped: string }> {
  try {
    return await load()
  } catch (err) {
    console.error(`${name}: ${(err as Error).message}`)
    return { skipped: (err as Error).message }
  }
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = { at: new Date().toISOString(), quick, node: process.version }
  const engine = await benchEngine(quick ? [200, 1_000] : [1_000, 10_000])
  results.engine = engine
  console.log('\nEngine (Node, fake-indexeddb; each observation: 3 entities, 2 relationships)')
  console.table(engine)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/bench.json', JSON.stringify(results, null, 2))
  console.log('wrote bench/results/bench.json')
}

void optional
main().catch((err) => {
  console.error(err)
  process.exit(1)
})
