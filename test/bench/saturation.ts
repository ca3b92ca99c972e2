// `npm run bench -- --saturation` (not in CI): offered load stepped up on each sync-server setup
// until p95 delivery passes 250 ms; the plain @y/websocket-server beside Cairn's server on its
// file store and on Redis with one and three processes. Writes bench/results/saturation.json.
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { redisAvailable } from '../support/redis'
import { loadSaturation, type SaturationResult, type SaturationSetup } from '../load/saturation'

export const SATURATION_JSON = 'bench/results/saturation.json'

const SETUPS: SaturationSetup[] = [
  { name: 'plain @y/websocket-server', server: 'plain', processes: 1 },
  { name: 'Cairn, file store', server: 'file', processes: 1 },
  { name: 'Cairn, Redis, 1 process', server: 'redis', processes: 1 },
  { name: 'Cairn, Redis, 3 processes', server: 'redis', processes: 3 },
]

/** Which setups and rates to run: every one unless `--only=plain,file` (setup kinds) or `--rates=700,1000` narrow it. */
export interface SaturationPick {
  only?: Array<SaturationSetup['server']>
  rates?: number[]
}

/** `--only=plain,file` and `--rates=700,1000` from a command line. */
export function saturationPick(argv: string[]): SaturationPick {
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  const only = value('only')?.split(',') as SaturationPick['only']
  const rates = value('rates')?.split(',').map(Number)
  if (only?.some((o) => !SETUPS.some((s) => s.server === o))) throw new Error(`--only takes ${[...new Set(SETUPS.map((s) => s.server))].join(', ')}`)
  if (rates?.some((r) => !(r > 0))) throw new Error('--rates takes offered writes per second, comma separated')
  return { only, rates }
}

export async function benchSaturation(quick: boolean, log: (line: string) => void = () => {}, pick: SaturationPick = {}): Promise<SaturationResult[]> {
  const setups = SETUPS.filter((s) => !pick.only || pick.only.includes(s.server))
  if (setups.some((s) => s.server === 'redis') && !redisAvailable()) throw new Error('redis-server is not installed (apt-get install redis-server)')
  const options = {
    rooms: 10,
    clientsPerRoom: 3,
    rates: pick.rates ?? (quick ? [100, 400] : [100, 200, 400, 700, 1_000, 1_400, 2_000, 2_800, 4_000]),
    stepMs: quick ? 2_000 : 5_000,
    drainMs: 2_000,
    p95LimitMs: 250,
    log,
  }
  const out: SaturationResult[] = []
  for (const setup of setups) out.push(await loadSaturation(setup, options))
  return out
}

export function printSaturation(results: SaturationResult[]): void {
  console.log('\nSync servers at saturation: 30 clients over 10 rooms on 127.0.0.1, offered writes/s stepped up until p95 write-to-arrival passes 250 ms (server CPU = every server process; cores = share of one core busy)')
  console.table(results.flatMap((r) => r.steps.map((s) => ({ setup: r.setup, ...s }))))
  const plain = results.find((r) => r.server === 'plain')?.best
  console.table(results.map((r) => ({
    setup: r.setup,
    sustainedWritesPerSecond: r.best?.writesPerSecond ?? 0,
    deliveriesPerSecond: r.best?.deliveriesPerSecond ?? 0,
    cpuPerWriteMs: r.best?.serverCpuPerWriteMs ?? NaN,
    cpuPerDeliveryMs: r.best?.serverCpuPerDeliveryMs ?? NaN,
    redisCommandsPerWrite: r.best?.redisCommandsPerWrite ?? null,
    ofPlain: plain && r.best ? Math.round((r.best.writesPerSecond / plain.writesPerSecond) * 100) / 100 : NaN,
  })))
}

export function writeSaturation(results: SaturationResult[]): void {
  mkdirSync('bench/results', { recursive: true })
  const machine = { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown CPU', loadAverage: loadavg() }
  writeFileSync(SATURATION_JSON, JSON.stringify({ at: new Date().toISOString(), node: process.version, machine, results }, null, 2))
  console.log(`wrote ${SATURATION_JSON}`)
}

// `npx tsx test/bench/saturation.ts [--quick] [--only=plain,file] [--rates=700,1000]`: this section alone.
if (process.argv[1]?.endsWith('saturation.ts')) {
  benchSaturation(process.argv.includes('--quick'), (l) => console.log(l), saturationPick(process.argv)).then((r) => {
    printSaturation(r)
    writeSaturation(r)
  }, (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
