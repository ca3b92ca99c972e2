// Writes to a memory where one entity (its owner, say) is named in every note: each write adds
// a backer to that entity, which should cost the same however many notes already name it.
// Alone: `npx tsx test/bench/hub.ts 1000 5000`.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory } from '../../src/index'
import { percentile } from './stats'

export interface HubRow {
  /** Notes already naming the hub entity when the probe writes start. */
  hubObservations: number
  writeP50Ms: number
  writeP95Ms: number
}

const OWNER = { name: 'Sam Rivera', type: 'person', description: 'the person this memory belongs to' }

export async function benchHub(sizes: number[], probes = 50): Promise<HubRow[]> {
  const memory = await createMemory({ name: 'hub', indexedDB: new IDBFactory(), IDBKeyRange })
  const conn = await memory.connect({ agent: 'bench', tier: 'full' })
  const note = (title: string, topic: string) =>
    conn.write({ title, content: `${OWNER.name} noted ${topic}.`, entities: [OWNER, { name: topic, type: 'topic', description: `a topic of note ${title}` }], relationships: [{ source: OWNER.name, type: 'noted', target: topic }] })
  const rows: HubRow[] = []
  let written = 0
  try {
    for (const n of [...sizes].sort((a, b) => a - b)) {
      for (; written < n; written++) await note(`note ${written}`, `Topic ${written}`)
      const ms: number[] = []
      for (let i = 0; i < probes; i++) {
        const t = performance.now()
        await note(`probe ${n}-${i}`, `Probe ${n} ${i}`)
        ms.push(performance.now() - t)
      }
      written += probes
      rows.push({ hubObservations: n, writeP50Ms: Math.round(percentile(ms, 50) * 100) / 100, writeP95Ms: Math.round(percentile(ms, 95) * 100) / 100 })
    }
  } finally {
    await memory.close()
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  console.table(await benchHub(sizes.length ? sizes : [1_000, 5_000]))
}
