// `npx tsx test/bench/mcp-alone.ts [SIZES...]`: the MCP round-trip bench alone (default 1000).
import { benchMcp } from './mcp'

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0)
  const t0 = performance.now()
  const rows = await benchMcp(sizes.length ? sizes : [1_000])
  console.log('\nMCP recall round trip (real server over stdio and Streamable HTTP on 127.0.0.1 vs dispatchTool in-process; read token)')
  console.table(rows)
  console.log(`done in ${Math.round((performance.now() - t0) / 1000)} s`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
