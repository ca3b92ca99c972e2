// `npx tsx test/bench/open-alone.ts [SIZE] [--hybrid] [--runs N] [--json FILE]`: the engine's
// open on fake-indexeddb, alone. A memory of SIZE observations (default 10000) is filled by one
// import, as the browser bench fills its largest row, its index saved, then opened RUNS times
// (default 3): each open timed whole and step by step (MemoryEngine.openSteps), with its first
// recall, so time spent outside the named steps shows as `unnamed`.
import { writeFileSync } from 'node:fs'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { validateObservationInput } from '../../src/core/contract'
import type { Observation } from '../../src/core/types'
import { Memory } from '../../src/engine/memory-handle'
import { engineOf } from '../../src/internals'
import { defaultEmbedder } from '../support/default-embedder'
import { observationFor } from './engine'

interface OpenRun {
  openMs: number
  firstRecallMs: number
  cpuMs: number
  steps: Record<string, number>
  unnamedMs: number
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  const flagValues = new Set([valueOf('--runs'), valueOf('--json')])
  const n = Number(args.find((a) => /^\d+$/.test(a) && !flagValues.has(a)) ?? 10_000)
  const runs = Number(valueOf('--runs') ?? 3)
  const json = valueOf('--json')
  const embedder = args.includes('--hybrid') ? await defaultEmbedder() : undefined
  const deps = { indexedDB: new IDBFactory(), IDBKeyRange, ...(embedder ? { embedder } : {}) }

  const now = new Date().toISOString()
  const observations: Observation[] = Array.from({ length: n }, (_, i) => {
    const { warnings: _w, ...fields } = validateObservationInput(observationFor(i, Math.max(10, n)))
    return { slug: `bench-${i}`, ...fields, observedAt: fields.observedAt ?? now, createdBy: 'bench', createdAt: now, updatedAt: now }
  })
  const memory = await Memory.create({ name: `open-${n}`, ...deps })
  const conn = await memory.connect({ agent: 'bench', tier: 'full' })
  const f0 = performance.now()
  await engineOf(memory).importObservations(observations, [])
  const fillMs = performance.now() - f0
  await memory.close()
  console.log(`filled ${n} observations in ${Math.round(fillMs)} ms`)

  const results: OpenRun[] = []
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    const again = await Memory.open(memory.info.id, deps)
    const openMs = performance.now() - t0
    const reader = await again.connectWithToken(conn.token!)
    const q0 = performance.now()
    const recall = await reader.recall({ query: 'Entity 7' })
    const firstRecallMs = performance.now() - q0
    const cpu = process.cpuUsage(c0)
    if (!recall.entities.length) throw new Error('the reopened memory recalled nothing')
    const steps = Object.fromEntries(Object.entries(engineOf(again).openSteps).map(([k, v]) => [k, Math.round(v)]))
    const named = Object.values(engineOf(again).openSteps).reduce((a, b) => a + b, 0)
    results.push({ openMs: Math.round(openMs), firstRecallMs: Math.round(firstRecallMs), cpuMs: Math.round((cpu.user + cpu.system) / 1_000), steps, unnamedMs: Math.round(openMs - named) })
    await again.close()
  }
  console.table(results.map(({ steps, ...r }) => ({ ...r, steps: Object.entries(steps).map(([k, v]) => `${k} ${v}`).join(', ') })))
  if (json) writeFileSync(json, JSON.stringify({ observations: n, hybrid: embedder !== undefined, fillMs: Math.round(fillMs), runs: results }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
