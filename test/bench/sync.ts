// Sync benchmark (Yjs level, no engine): two devices each write N observations offline, then
// connect to a real sync server on 127.0.0.1; we time until both hold all 2N. Also the
// encoded document size per 1,000 observations, fresh and after every one was edited once.
// Run alone: `node --import tsx test/bench/sync.ts [--quick]`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import type { Observation } from '../../src/core/types'
import { silentLog } from '../../src/server/log'
import { startSyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc } from '../../src/sync/client'
import { ROOTS } from '../../src/sync/layout'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'

export interface SyncBenchRow {
  observationsPerDevice: number
  /** From connecting both devices until both hold every observation. */
  convergeMs: number
  /** Server log size on disk is not measured; this is the room as one update. */
  docBytesPer1000: number
  docBytesPer1000AfterEdits: number
  jsonBytesPer1000: number
}

function benchObservation(device: string, i: number): Observation {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()
  const people = [`Person ${device}${i}`, `Person ${device}${i + 1}`]
  return {
    slug: `note-${device}-${i}`,
    title: `Meeting note ${i} from ${device}`,
    content: `${people[0]} met ${people[1]} about Project ${i % 50}. `.repeat(6).trim(),
    category: 'meeting',
    tags: ['bench', `week-${i % 52}`],
    observedAt: at,
    confidence: 0.9,
    source: 'bench',
    entities: [
      { name: people[0]!, type: 'person', description: `A person seen in note ${i}`, queries: [] },
      { name: people[1]!, type: 'person', description: `Another person seen in note ${i}`, queries: [] },
      { name: `Project ${i % 50}`, type: 'project', description: `Project number ${i % 50}`, queries: [] },
    ],
    relationships: [
      { source: people[0]!, type: 'met', target: people[1]!, description: 'met at the meeting', weight: 1 },
      { source: people[0]!, type: 'works_on', target: `Project ${i % 50}`, description: '', weight: 1 },
    ],
    files: [],
    createdBy: `conn_${device}`,
    createdAt: at,
    updatedAt: at,
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('sync bench did not converge in time')
    await new Promise((r) => setTimeout(r, 2))
  }
}

async function convergeOnce(n: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-sync-bench-'))
  const server = await startSyncServer({ dataDir, port: 0, log: silentLog })
  try {
    const { token } = server.tokens.add({ memoryId: 'bench', tier: 'read_write', agent: 'bench' })
    const docs = [createMemoryDoc(), createMemoryDoc()]
    docs.forEach((doc, d) => {
      // One transaction per observation, as the engine writes them.
      for (let i = 0; i < n; i++) putObservation(doc, benchObservation(d === 0 ? 'a' : 'b', i))
    })
    const clients = docs.map((doc) => connectMemoryDoc({ serverUrl: server.url, memoryId: 'bench', token, doc, WebSocketPolyfill: WebSocket, crossTab: false, connect: false }))
    const start = performance.now()
    for (const c of clients) c.connect()
    await until(() => docs.every((doc) => doc.getMap(ROOTS.observations).size === 2 * n), 60_000)
    const ms = performance.now() - start
    for (const c of clients) c.destroy()
    return ms
  } finally {
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

function sizes(n: number): Pick<SyncBenchRow, 'docBytesPer1000' | 'docBytesPer1000AfterEdits' | 'jsonBytesPer1000'> {
  const doc = createMemoryDoc()
  const all = Array.from({ length: n }, (_, i) => benchObservation('a', i))
  for (const o of all) putObservation(doc, o)
  const fresh = Y.encodeStateAsUpdate(doc).byteLength
  applyMemoryWrites(doc, { observations: { put: all.map((o) => ({ ...o, title: `${o.title} (edited)` })) } })
  const edited = Y.encodeStateAsUpdate(doc).byteLength
  const json = Buffer.byteLength(JSON.stringify(all))
  const per1000 = (bytes: number) => Math.round((bytes / n) * 1000)
  return { docBytesPer1000: per1000(fresh), docBytesPer1000AfterEdits: per1000(edited), jsonBytesPer1000: per1000(json) }
}

export async function benchSync(counts: number[] = [1_000]): Promise<SyncBenchRow[]> {
  const rows: SyncBenchRow[] = []
  for (const n of counts) {
    await convergeOnce(Math.min(n, 100)) // warm-up: module loading and JIT
    const runs = [await convergeOnce(n), await convergeOnce(n), await convergeOnce(n)].sort((a, b) => a - b)
    rows.push({ observationsPerDevice: n, convergeMs: Math.round(runs[1]!), ...sizes(n) })
  }
  return rows
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes('--quick')
  benchSync(quick ? [200] : [1_000, 5_000]).then((rows) => {
    console.log('\nSync (two devices, N offline observations each, then connect; median of 3)')
    console.table(rows)
  }, (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
