// `npx tsx test/bench/import-restart.ts [SIZE] [--runs N] [--json FILE]`: the durable Node store
// as `cairn import` and the hosts use it, without the writes of durable-alone: an MCP memory
// server file of SIZE entities (default 10000) imported into a fresh folder (timed, and its
// close), then the folder restarted RUNS times (default 3): open + first recall, wall and CPU,
// the steps of the engine's open, and the close that follows.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importMcpMemory } from '../../src/interop/import'
import { openNodeMemory } from '../../src/node-store/node-memory'
import { engineOf } from '../../src/internals'
import { defaultEmbedder } from '../support/default-embedder'
import { mcpMemoryFile } from './package'

const cpuMs = (u: NodeJS.CpuUsage): number => Math.round((u.user + u.system) / 1_000)

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  const flagValues = new Set([valueOf('--runs'), valueOf('--json')])
  const n = Number(args.find((a) => /^\d+$/.test(a) && !flagValues.has(a)) ?? 10_000)
  const runs = Number(valueOf('--runs') ?? 3)
  const json = valueOf('--json')
  const embedder = await defaultEmbedder()
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-restart-'))
  try {
    const text = mcpMemoryFile(n)
    const opened = await openNodeMemory(dir, { embedder })
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const report = await importMcpMemory(opened.memory, text)
    const imported = { importMs: Math.round(performance.now() - t0), importCpuMs: cpuMs(process.cpuUsage(c0)), closeMs: 0 }
    if (report.entities.imported !== n) throw new Error(`imported ${report.entities.imported} of ${n} entities`)
    const s0 = performance.now()
    await opened.close()
    imported.closeMs = Math.round(performance.now() - s0)
    console.table([imported])
    const restarts = []
    for (let r = 0; r < runs; r++) {
      const r0 = performance.now()
      const c1 = process.cpuUsage()
      const again = await openNodeMemory(dir, { embedder })
      const reader = await again.memory.connect({ agent: 'bench', tier: 'read' })
      const recall = await reader.recall({ query: 'Entity 7' })
      const restartMs = Math.round(performance.now() - r0)
      const restartCpuMs = cpuMs(process.cpuUsage(c1))
      if (!recall.entities.length) throw new Error('the restarted store recalled nothing')
      const steps = Object.entries(engineOf(again.memory).openSteps).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')
      const e0 = performance.now()
      await again.close()
      restarts.push({ restartMs, restartCpuMs, storeMs: again.timings.storeMs, openMs: again.timings.memoryMs, closeMs: Math.round(performance.now() - e0), steps })
    }
    console.table(restarts)
    if (json) writeFileSync(json, JSON.stringify({ entities: n, imported, restarts }, null, 2))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
