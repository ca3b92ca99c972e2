// Writes to a memory where one entity (its owner, say) is named in every note: each write adds
// a backer to that entity, which should cost the same however many notes already name it; and
// recalls of one note among the hub's, which must still find the note that answers; and a write
// naming the hub right after the memory is opened again from its saved state, which reads and
// files every note backing the hub first.
// Alone: `npx tsx test/bench/hub.ts 1000 5000`.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Connection, type Memory } from '../../src/index'
import { percentile } from './stats'

export interface HubRow {
  /** Notes already naming the hub entity when the probe writes start. */
  hubObservations: number
  writeP50Ms: number
  writeP95Ms: number
  /** Recall of one topic's note, which the hub backs among all the others. */
  recallP50Ms: number
  recallP95Ms: number
  /** Share of the recalls whose first observation was the note asked about. */
  recallFoundFirst: number
  /** A write naming the hub right after an open of the saved memory, before the open's own filing. */
  writeAfterOpenMs: number
}

const OWNER = { name: 'Sam Rivera', type: 'person', description: 'the person this memory belongs to' }

export async function benchHub(sizes: number[], probes = 50): Promise<HubRow[]> {
  const indexedDB = new IDBFactory()
  let memory: Memory = await createMemory({ name: 'hub', indexedDB, IDBKeyRange })
  let conn: Connection = await memory.connect({ agent: 'bench', tier: 'full' })
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
      // ask for single notes among the hub's: the answer must come from the note's own text
      const recallMs: number[] = []
      let found = 0
      for (let i = 0; i < probes; i++) {
        const topic = `Topic ${(i * 7919) % n}`
        const t = performance.now()
        const r = await conn.recall({ query: `what did Sam note about ${topic.toLowerCase()}`, limits: { observations: 5 } })
        recallMs.push(performance.now() - t)
        if (r.observations[0]?.title === `note ${(i * 7919) % n}`) found++
      }
      await memory.saveIndex()
      await memory.close()
      memory = await openMemory(memory.info.id, { indexedDB, IDBKeyRange })
      conn = await memory.connect({ agent: 'bench', tier: 'full' })
      const t = performance.now()
      await note(`after open ${n}`, `After open ${n}`)
      const writeAfterOpenMs = performance.now() - t
      written++
      const round = (x: number) => Math.round(x * 100) / 100
      rows.push({ hubObservations: n, writeP50Ms: round(percentile(ms, 50)), writeP95Ms: round(percentile(ms, 95)), recallP50Ms: round(percentile(recallMs, 50)), recallP95Ms: round(percentile(recallMs, 95)), recallFoundFirst: found / probes, writeAfterOpenMs: round(writeAfterOpenMs) })
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
