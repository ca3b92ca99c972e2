// A second device joins a large memory from empty, through a real sync server in a process of
// its own: until its first recall answers (and whether that answer says it is partial), until it
// is synced and until every note is applied and saved; the longest this process's event loop was
// held meanwhile (the Node device runs its engine on it, as a browser's worker does); the
// server's loop delay and RSS growth. The room is written straight into the server's data
// directory first (one record), so the measurement starts from a server that holds it.
// Alone: `npx tsx test/bench/first-sync-join.ts [notes=10000]` (writes bench/results/first-sync-join.json).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { createMemory } from '../../src/index'
import { FileRoomStore } from '../../src/server/file-room-store'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { serverInChild } from '../load/server-handle'
import { observation } from '../sync/fixture'

const MiB = 1024 * 1024
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d

export interface JoinResult {
  notes: number
  roomMiB: number
  firstRecallMs: number | null
  /** Whether that first answer said it came from part of the memory. */
  firstRecallPartial: boolean
  syncedMs: number
  /** Every note applied to the engine and saved on the device. */
  settledMs: number
  notesHeld: number
  deviceLoopMaxMs: number
  deviceLoopP99Ms: number
  serverLoopP99Ms: number
  serverLoopMaxMs: number
  serverRssGrowthMiB: number
}

/** The room as a server would hold it: `notes` notes of a few entities each, in one update. */
function roomState(notes: number): Uint8Array {
  const doc = createMemoryDoc()
  const people = ['Ada Park', 'Bo Lind', 'Cy Moreau', 'Di Okafor', 'Eli Varga']
  for (let i = 0; i < notes; i += 1_000) {
    applyMemoryWrites(doc, {
      observations: {
        put: Array.from({ length: Math.min(1_000, notes - i) }, (_, k) => {
          const n = i + k
          const person = people[n % people.length]!
          const project = `Project ${n % 97}`
          return observation(`join-${n}`, {
            title: `Harbour note ${n}`,
            content: `${person} met the harbour crew about ${project} and the winter schedule (note ${n}).`,
            entities: [
              { name: person, type: 'person', description: `${person} works at the harbour`, queries: [] },
              { name: project, type: 'project', description: `${project} is a harbour project`, queries: [] },
            ],
            relationships: [{ source: person, type: 'works_on', target: project, description: '', weight: 1 }],
          })
        }),
      },
    })
  }
  return Y.encodeStateAsUpdate(doc)
}

export async function benchFirstSyncJoin(notes: number): Promise<JoinResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-join-'))
  const memoryId = `join-${notes}`
  const state = roomState(notes)
  const store = new FileRoomStore(dataDir)
  await store.persist(memoryId, state)
  await store.close()
  const server = await serverInChild(dataDir, () => {})
  const device = await createMemory({ name: 'joining', id: memoryId, indexedDB: new IDBFactory(), IDBKeyRange })
  // the first device stays connected, so the room stays loaded: loading it is not what is measured
  let first: Awaited<ReturnType<typeof createMemory>> | undefined
  try {
    const token = await server.addToken(memoryId, 'full', 'second device')
    first = await createMemory({ name: 'first', id: memoryId, indexedDB: new IDBFactory(), IDBKeyRange })
    const holder = await first.sync({ crossTab: false })
    holder.connect({ serverUrl: server.url, token: await server.addToken(memoryId, 'read', 'holder'), WebSocketPolyfill: WebSocket })
    await holder.client!.whenSynced(600_000)
    await server.reset()
    const rssStart = (await server.stats()).rss
    const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
    const loop = monitorEventLoopDelay({ resolution: 5 })
    loop.enable()
    const started = performance.now()
    const sync = await device.sync({ crossTab: false })
    sync.connect({ serverUrl: server.url, token, WebSocketPolyfill: WebSocket })
    let firstRecallMs: number | null = null
    let firstRecallPartial = false
    let settled = false
    const syncedAt = sync.client!.whenSynced(600_000).then(() => performance.now() - started)
    const settledAt = syncedAt.then(() => sync.settled()).then(() => {
      settled = true
      return performance.now() - started
    })
    while (!settled && firstRecallMs === null) {
      const r = await agent.recall({ query: 'harbour crew winter schedule' })
      if (r.entities.length) {
        firstRecallMs = performance.now() - started
        firstRecallPartial = r.syncing !== undefined
      } else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const syncedMs = await syncedAt
    const settledMs = await settledAt
    firstRecallMs ??= settledMs
    loop.disable()
    const held = await agent.listObservations({ limit: 1 })
    const stats = await server.stats()
    return {
      notes,
      roomMiB: round(state.byteLength / MiB),
      firstRecallMs: round(firstRecallMs, 0),
      firstRecallPartial,
      syncedMs: round(syncedMs, 0),
      settledMs: round(settledMs, 0),
      notesHeld: held.total,
      deviceLoopMaxMs: round(loop.max / 1e6),
      deviceLoopP99Ms: round(loop.percentile(99) / 1e6),
      serverLoopP99Ms: round(stats.loopDelay.p99),
      serverLoopMaxMs: round(stats.loopDelay.max),
      serverRssGrowthMiB: round((stats.peakRss - rssStart) / MiB),
    }
  } finally {
    await first?.close()
    await device.close()
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1]?.endsWith('first-sync-join.ts')) {
  const notes = Number(process.argv[2] ?? 10_000)
  benchFirstSyncJoin(notes).then((r) => {
    console.table([r])
    mkdirSync('bench/results', { recursive: true })
    writeFileSync('bench/results/first-sync-join.json', JSON.stringify({ at: new Date().toISOString(), ...r }, null, 2))
  }, (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
