// `npx tsx test/bench/node-store-scale.ts [ENTITIES...] [--base REF] [--writes N] [--recalls N]`:
// the durable Node store (hybrid) at scale. Each size is filled by importing an MCP memory server
// file of ENTITIES entities (default 10000) into a fresh folder, in a process of its own (import
// time, peak RSS), then a second process restarts the folder: open + first recall, recall p50 over
// varied queries, write p50/p95 over new notes, RSS after. With --base, the same bench runs first
// on REF's source (a scratch worktree; default the commit before HEAD), then on this tree,
// one fill at a time, and prints both side by side. Writes bench/results/node-store-scale.json.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const SELF = 'test/bench/node-store-scale.ts'
const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024)
const cpuMs = (u: NodeJS.CpuUsage): number => Math.round((u.user + u.system) / 1_000)
const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10
}
const folderBytes = (dir: string): number => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0)
/** Peak resident set of this process, in MiB (maxRSS is in KiB). */
const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 1024)

interface FillResult { entities: number; observations: number; importMs: number; importCpuMs: number; fillCloseMs: number; fillPeakRssMb: number; folderMB: number }
interface ReopenResult { restartMs: number; restartCpuMs: number; storeMs: number; openMs: number; recallP50Ms: number; recallP95Ms: number; writeP50Ms: number; writeP95Ms: number; writeMaxMs: number; rssMb: number; peakRssMb: number; closeMs: number }

/** Child: import `entities` into the empty folder `dir`, close it. */
async function fill(entities: number, dir: string): Promise<FillResult> {
  const { importMcpMemory } = await import('../../src/interop/import')
  const { openNodeMemory } = await import('../../src/node-store/node-memory')
  const { defaultEmbedder } = await import('../support/default-embedder')
  const { mcpMemoryFile } = await import('./package')
  const embedder = await defaultEmbedder()
  let text: string | undefined = mcpMemoryFile(entities)
  const opened = await openNodeMemory(dir, { embedder })
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const report = await importMcpMemory(opened.memory, text)
  const importMs = Math.round(performance.now() - t0)
  const importCpuMs = cpuMs(process.cpuUsage(c0))
  text = undefined
  if (report.entities.imported !== entities) throw new Error(`imported ${report.entities.imported} of ${entities} entities`)
  const s0 = performance.now()
  await opened.close()
  return { entities, observations: report.notes, importMs, importCpuMs, fillCloseMs: Math.round(performance.now() - s0), fillPeakRssMb: peakRssMb(), folderMB: mb(folderBytes(dir)) }
}

/** Child: restart the folder, recall and write, close. */
async function reopen(dir: string, entities: number, writes: number, recalls: number): Promise<ReopenResult> {
  const { openNodeMemory } = await import('../../src/node-store/node-memory')
  const { defaultEmbedder } = await import('../support/default-embedder')
  const { dispatchTool } = await import('../../src/tools/dispatch')
  const { observationFor } = await import('./engine')
  const embedder = await defaultEmbedder()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const again = await openNodeMemory(dir, { embedder })
  const reader = await again.memory.connect({ agent: 'bench', tier: 'read' })
  const first = await reader.recall({ query: 'Entity 7' })
  const restartMs = Math.round(performance.now() - t0)
  const restartCpuMs = cpuMs(process.cpuUsage(c0))
  if (!first.entities.length) throw new Error('the restarted store recalled nothing')
  const recallMs: number[] = []
  for (let i = 0; i < recalls; i++) {
    const id = (i * 7919) % entities
    const query = i % 2 ? `Entity ${id}` : `what do we know about entity ${id} and its work`
    const r = performance.now()
    await reader.recall({ query })
    recallMs.push(performance.now() - r)
  }
  const writer = await again.memory.connect({ agent: 'bench', tier: 'full' })
  const writeMs: number[] = []
  for (let i = 0; i < writes; i++) {
    const args = observationFor(entities + i, entities)
    const w = performance.now()
    const out = await dispatchTool(writer, 'write', args)
    writeMs.push(performance.now() - w)
    if (!out.ok) throw new Error(`write ${i} failed: ${out.error.message}`)
  }
  const rssMb = mb(process.memoryUsage().rss)
  const e0 = performance.now()
  await again.close()
  return {
    restartMs, restartCpuMs, storeMs: again.timings.storeMs, openMs: again.timings.memoryMs,
    recallP50Ms: pct(recallMs, 50), recallP95Ms: pct(recallMs, 95),
    writeP50Ms: pct(writeMs, 50), writeP95Ms: pct(writeMs, 95), writeMaxMs: pct(writeMs, 100),
    rssMb, peakRssMb: peakRssMb(), closeMs: Math.round(performance.now() - e0),
  }
}

/** Runs one phase in a fresh process of `tree`'s source; its result is the last line it prints. */
function phase<T>(tree: string, args: string[]): T {
  const out = spawnSync(process.execPath, ['--max-old-space-size=8192', '--import', 'tsx', SELF, '--phase', ...args], { cwd: tree, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] })
  if (out.status !== 0) throw new Error(`${args[0]} in ${tree} exited ${out.status}: ${out.stdout.slice(-2000)}`)
  const lines = out.stdout.trim().split('\n')
  return JSON.parse(lines[lines.length - 1]!) as T
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  if (args[0] === '--phase') {
    const [, name, a, b, c, d] = args
    const result = name === 'fill' ? await fill(Number(a), b!) : await reopen(a!, Number(b), Number(c), Number(d))
    console.log(JSON.stringify(result))
    process.exit(0)
  }
  const flagged = new Set(['--base', '--writes', '--recalls'].map(valueOf))
  const sizes = args.filter((a) => /^\d+$/.test(a) && !flagged.has(a)).map(Number)
  if (!sizes.length) sizes.push(10_000)
  const writes = Number(valueOf('--writes') ?? 300)
  const recalls = Number(valueOf('--recalls') ?? 100)
  const trees: Array<{ label: string; path: string }> = []
  const work = mkdtempSync(join(tmpdir(), 'cairn-bench-scale-'))
  try {
    if (args.includes('--base')) {
      const ref = valueOf('--base') && !valueOf('--base')!.startsWith('--') ? valueOf('--base')! : 'HEAD~1'
      const base = join(work, 'base')
      execFileSync('git', ['-C', REPO, 'worktree', 'add', '--detach', base, ref], { stdio: 'ignore' })
      symlinkSync(join(REPO, 'node_modules'), join(base, 'node_modules'))
      // the same bench code measures both trees' sources
      copyFileSync(join(REPO, SELF), join(base, SELF))
      trees.push({ label: `base ${execFileSync('git', ['-C', REPO, 'rev-parse', '--short', ref], { encoding: 'utf8' }).trim()}`, path: base })
    }
    trees.push({ label: `this tree ${execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}`, path: REPO })
    const rows: Array<Record<string, unknown>> = []
    for (const n of sizes) {
      for (const tree of trees) {
        const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-scale-store-'))
        try {
          console.error(`== ${tree.label}: ${n} entities`)
          const filled = phase<FillResult>(tree.path, ['fill', String(n), dir])
          console.error(JSON.stringify(filled))
          const reopened = phase<ReopenResult>(tree.path, ['reopen', dir, String(n), String(writes), String(recalls)])
          console.error(JSON.stringify(reopened))
          rows.push({ tree: tree.label, ...filled, ...reopened })
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }
    console.table(rows.map(({ tree, entities, observations, importMs, fillPeakRssMb, folderMB, restartMs, storeMs, recallP50Ms, writeP50Ms, writeP95Ms, rssMb, peakRssMb }) => ({ tree, entities, observations, importMs, fillPeakRssMb, folderMB, restartMs, storeMs, recallP50Ms, writeP50Ms, writeP95Ms, rssMb, peakRssMb })))
    mkdirSync(join(REPO, 'bench/results'), { recursive: true })
    writeFileSync(join(REPO, 'bench/results/node-store-scale.json'), JSON.stringify({ writes, recalls, rows }, null, 2))
    console.log('wrote bench/results/node-store-scale.json')
  } finally {
    if (trees[0]?.path !== REPO) execFileSync('git', ['-C', REPO, 'worktree', 'remove', '--force', join(work, 'base')], { stdio: 'ignore' })
    rmSync(work, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
