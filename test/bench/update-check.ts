// What the sync server spends judging one small update from a read_write connection, against
// rooms of N observations: the room's kept copy (what the server does) beside copying the
// whole room per update (what it would cost without the copy). Alone:
// `npx tsx test/bench/update-check.ts 1000 10000`.
import * as Y from 'yjs'
import { checkUpdate } from '../../src/server/update-policy'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { observation } from '../sync/fixture'
import { percentile } from './stats'

export interface UpdateCheckRow {
  observations: number
  roomBytes: number
  /** Judging one update against the kept copy of the room. */
  checkP50Ms: number
  checkP95Ms: number
  /** The same judgement after copying the whole room first, the floor of a copy-per-update design. */
  copyRoomP50Ms: number
  speedup: number
}

const obs = (i: number) => observation(`obs-${i}`, { content: `Notes about item ${i}. `.repeat(12).trim(), entities: [{ name: `Entity ${i}`, type: 'thing', description: `described by note ${i}`, queries: [] }] })

export function benchUpdateCheck(sizes: number[], rounds = 40): UpdateCheckRow[] {
  const rows: UpdateCheckRow[] = []
  for (const n of sizes) {
    const room = createMemoryDoc()
    for (let i = 0; i < n; i += 500) applyMemoryWrites(room, { observations: { put: Array.from({ length: Math.min(500, n - i) }, (_, k) => obs(i + k)) } })
    const client = createMemoryDoc()
    Y.applyUpdate(client, Y.encodeStateAsUpdate(room))
    let last: Uint8Array = new Uint8Array()
    client.on('update', (u: Uint8Array) => (last = u))
    const checks: number[] = []
    const copies: number[] = []
    for (let i = 0; i < rounds; i++) {
      applyMemoryWrites(client, { observations: { put: [obs(n + i)] } })
      let t = performance.now()
      const verdict = checkUpdate('read_write', room, last)
      checks.push(performance.now() - t)
      if (!verdict.ok || verdict.noop) throw new Error(`a valid addition was judged ${JSON.stringify(verdict)}`)
      if (i < 5) {
        // what each check would start with if the room were copied for it
        t = performance.now()
        const copy = new Y.Doc()
        Y.applyUpdate(copy, Y.encodeStateAsUpdate(room))
        Y.applyUpdate(copy, last)
        copies.push(performance.now() - t)
        copy.destroy()
      }
      Y.applyUpdate(room, last)
    }
    const round = (x: number) => Math.round(x * 1000) / 1000
    const check = percentile(checks, 50)
    const copy = percentile(copies, 50)
    rows.push({ observations: n, roomBytes: Y.encodeStateAsUpdate(room).byteLength, checkP50Ms: round(check), checkP95Ms: round(percentile(checks, 95)), copyRoomP50Ms: round(copy), speedup: Math.round(copy / Math.max(check, 0.001)) })
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  console.table(benchUpdateCheck(sizes.length ? sizes : [1_000, 10_000]))
}
