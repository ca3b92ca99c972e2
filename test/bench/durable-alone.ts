// `npx tsx test/bench/durable-alone.ts [SIZE] [--json FILE]`: the durable Node store alone
// (writes, restart, import of an MCP memory server file; default 10000), without the package size.
import { writeFileSync } from 'node:fs'
import { defaultEmbedder } from '../support/default-embedder'
import { benchDurable, benchMcpImport } from './package'

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const jsonAt = args.indexOf('--json')
  const json = jsonAt >= 0 ? args[jsonAt + 1] : undefined
  const n = Number(args.find((a, i) => /^\d+$/.test(a) && i !== jsonAt + 1) ?? 10_000)
  const embedder = await defaultEmbedder()
  const durable = await benchDurable([n], embedder)
  console.table(durable)
  const mcpImport = await benchMcpImport([n], embedder)
  console.table(mcpImport)
  if (json) writeFileSync(json, JSON.stringify({ durable, mcpImport }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
