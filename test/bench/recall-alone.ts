// `npx tsx test/bench/recall-alone.ts [SIZE] [--hybrid] [--rounds N] [--profile FILE]`: the
// engine bench's recall alone. A memory of SIZE observations (default 10000) is filled by writes,
// as `npm run bench` fills it, then the bench's 200 recalls run ROUNDS times (default 3); each
// round's p50/p95 and mean CPU time per recall are printed. `--profile` writes a V8 CPU profile
// of the recalls alone (open it in Chrome's DevTools), so the fill does not drown them.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { defaultEmbedder } from '../support/default-embedder'
import { filled, word } from './engine'
import { percentile } from './stats'

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  const flagValues = new Set([valueOf('--rounds'), valueOf('--profile')])
  const n = Number(args.find((a) => /^\d+$/.test(a) && !flagValues.has(a)) ?? 10_000)
  const rounds = Number(valueOf('--rounds') ?? 3)
  const profile = valueOf('--profile')
  const embedder = args.includes('--hybrid') ? await defaultEmbedder() : undefined
  const f0 = performance.now()
  const { conn, memory } = await filled(n, embedder)
  console.log(`${embedder ? 'hybrid' : 'bm25'}: filled ${n} observations in ${Math.round(performance.now() - f0)} ms`)
  const session = profile ? new Session() : undefined
  if (session) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 100 })
    await session.post('Profiler.start')
  }
  const rows = []
  for (let r = 0; r < rounds; r++) {
    const ms: number[] = []
    // CPU time as well: on a shared machine wall time carries the other work's share
    const cpu0 = process.cpuUsage()
    for (let q = 0; q < 200; q++) {
      const s = performance.now()
      const id = (q * 7919) % Math.max(10, n)
      await conn.recall({ query: `${word(id * 31 + 1)} ${word(id * 31 + 4)}` })
      ms.push(performance.now() - s)
    }
    const cpu = process.cpuUsage(cpu0)
    rows.push({ round: r + 1, recallP50Ms: percentile(ms, 50), recallP95Ms: percentile(ms, 95), cpuMsPerRecall: Math.round((cpu.user + cpu.system) / 200) / 1000 })
  }
  if (session && profile) {
    const { profile: cpu } = await session.post('Profiler.stop')
    writeFileSync(profile, JSON.stringify(cpu))
    session.disconnect()
  }
  console.table(rows)
  await memory.close()
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
