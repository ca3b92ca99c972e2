// `npx tsx test/bench/package-alone.ts [SIZE]`: the package bench alone (default 10000).
import { defaultEmbedder } from '../support/default-embedder'
import { benchDurable, benchMcpImport, benchPackageSize } from './package'

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 10_000)
  const embedder = await defaultEmbedder()
  console.table([benchPackageSize()])
  console.table(await benchDurable([n], embedder))
  console.table(await benchMcpImport([n], embedder))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
