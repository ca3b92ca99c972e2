// `npx tsx test/bench/yjs-apply-alone.ts [--quick] [--hybrid]`: raw Yjs apply against Cairn's
// apply + re-derive for the same peer updates, a table on the console and JSON under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs'
import { defaultEmbedder } from '../support/default-embedder'
import { benchYjsApply } from './yjs-apply'

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick')
  const hybrid = process.argv.includes('--hybrid')
  const sizes = quick ? [1_000] : [1_000, 10_000]
  const rows = await benchYjsApply(sizes, { batch: 100, runs: quick ? 3 : 9, ...(hybrid ? { embedder: await defaultEmbedder() } : {}) })
  console.log('\nRemote updates: Y.applyUpdate on a plain Y.Doc vs Cairn (bound document: validate, re-derive, IndexedDB, index), ms per update, median run')
  console.table(rows.map(({ split, ...r }) => ({ ...r, ...Object.fromEntries(Object.entries(split ?? {}).map(([k, v]) => [`${k}Ms`, v])) })))
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(`bench/results/yjs-apply${hybrid ? '-hybrid' : ''}.json`, JSON.stringify({ at: new Date().toISOString(), node: process.version, quick, rows }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
