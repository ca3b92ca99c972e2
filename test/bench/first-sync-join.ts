// A second device joins a large memory from empty, through a real sync server in a process of
// its own: until its first recall answers (and whether that answer says it is partial), until it
// is synced and until every note is applied and saved; the longest this process's event loop was
// held meanwhile (the Node device runs its engine on it, as a browser's worker does); the
// server's loop delay and RSS growth. The room is written straight into the server's data
// directory first (one record), so the measurement starts from a server that holds it.
// Alone: `npx tsx test/bench/first-sync-join.ts [notes=10000]`; beside a base commit, alternately:
// `npx tsx test/bench/first-sync-join.ts [notes] --base [REF=HEAD~1] [--rounds N]` (each join in a
// process of its own). Writes bench/results/first-sync-join.json. The same join in Chromium, through
// the app: first-sync-join-browser.ts.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { createMemory } from '../../src/index'
import { FileRoomStore } from '../../src/server/file-room-store'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { serverInChild, type ServerHandle } from '../load/server-handle'
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
  /** CPU time of the device's process (its threads, the collector's too) from connecting until settled: less moved by a shared machine's load than the wall times. */
  deviceCpuMs: number
  notesHeld: number
  deviceLoopMaxMs: number
  deviceLoopP99Ms: number
  /** Then the state a quick open reads is saved (as 2 s after the last change it would be): how long, and the longest hold of the loop meanwhile. */
  saveMs: number
  saveLoopMaxMs: number
  serverLoopP99Ms: number
  serverLoopMaxMs: number
  serverRssGrowthMiB: number
}

/** The room as a server would hold it: `notes` notes of a few entities each, in one update. */
export function roomState(notes: number): Uint8Array {
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

/** A sync server in a process of its own, holding a room a device may join. */
export interface HeldRoom {
  server: ServerHandle
  memoryId: string
  /** The room's size as one update, bytes. */
  roomBytes: number
}

/**
 * Writes a room of `notes` notes straight into a fresh data directory, starts the server over it
 * in a child process and keeps a first device connected, so the room stays loaded: loading it is
 * not what is measured. That device is a bare document, with no engine: an engine would still be
 * applying the room on this process's loop while the joining device is measured. Everything is
 * stopped and removed once `run` is done.
 */
export async function withHeldRoom<T>(notes: number, run: (room: HeldRoom) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-join-'))
  const memoryId = `join-${notes}`
  const state = roomState(notes)
  const store = new FileRoomStore(dataDir)
  await store.persist(memoryId, state)
  await store.close()
  let server: ServerHandle | undefined
  let holder: SyncClient | undefined
  try {
    server = await serverInChild(dataDir, () => {})
    holder = connectMemoryDoc({ serverUrl: server.url, memoryId, token: await server.addToken(memoryId, 'read', 'holder'), doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false })
    await holder.whenSynced(600_000)
    return await run({ server, memoryId, roomBytes: state.byteLength })
  } finally {
    holder?.destroy()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export async function benchFirstSyncJoin(notes: number): Promise<JoinResult> {
  return withHeldRoom(notes, async ({ server, memoryId, roomBytes }) => {
    const device = await createMemory({ name: 'joining', id: memoryId, indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const token = await server.addToken(memoryId, 'full', 'second device')
      await server.reset()
      const rssStart = (await server.stats()).rss
      const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
      const loop = monitorEventLoopDelay({ resolution: 5 })
      loop.enable()
      const started = performance.now()
      const cpuAtStart = process.cpuUsage()
      const sync = await device.sync({ crossTab: false })
      sync.connect({ serverUrl: server.url, token, WebSocketPolyfill: WebSocket })
      let firstRecallMs: number | null = null
      let firstRecallPartial = false
      let settled = false
      const syncedAt = sync.client!.whenSynced(600_000).then(() => performance.now() - started)
      let cpuUntilSettled = { user: 0, system: 0 }
      const settledAt = syncedAt.then(() => sync.settled()).then(() => {
        settled = true
        cpuUntilSettled = process.cpuUsage(cpuAtStart)
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
      const saveLoop = monitorEventLoopDelay({ resolution: 5 })
      saveLoop.enable()
      const saveStarted = performance.now()
      await device.saveIndex()
      const saveMs = performance.now() - saveStarted
      saveLoop.disable()
      const held = await agent.listObservations({ limit: 1 })
      const stats = await server.stats()
      return {
        notes,
        roomMiB: round(roomBytes / MiB),
        firstRecallMs: round(firstRecallMs, 0),
        firstRecallPartial,
        syncedMs: round(syncedMs, 0),
        settledMs: round(settledMs, 0),
        deviceCpuMs: round((cpuUntilSettled.user + cpuUntilSettled.system) / 1000, 0),
        notesHeld: held.total,
        deviceLoopMaxMs: round(loop.max / 1e6),
        deviceLoopP99Ms: round(loop.percentile(99) / 1e6),
        saveMs: round(saveMs, 0),
        saveLoopMaxMs: round(saveLoop.max / 1e6),
        serverLoopP99Ms: round(stats.loopDelay.p99),
        serverLoopMaxMs: round(stats.loopDelay.max),
        serverRssGrowthMiB: round((stats.peakRss - rssStart) / MiB),
      }
    } finally {
      await device.close()
    }
  })
}

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..')
const SELF = 'test/bench/first-sync-join.ts'

/** One join in a process of its own, from the tree at `path` (its sources, this bench). */
function joinIn(path: string, notes: number): JoinResult {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(path, SELF), '--one', String(notes)], { cwd: path, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 })
  return JSON.parse(out.trim().split('\n').at(-1)!) as JoinResult
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  if (args[0] === '--one') {
    console.log(JSON.stringify(await benchFirstSyncJoin(Number(args[1]))))
    process.exit(0)
  }
  const flagged = new Set(['--base', '--rounds'].map(valueOf))
  const notes = Number(args.find((a) => /^\d+$/.test(a) && !flagged.has(a)) ?? 10_000)
  const rounds = Number(valueOf('--rounds') ?? 1)
  if (!args.includes('--base')) {
    const r = await benchFirstSyncJoin(notes)
    console.table([r])
    mkdirSync('bench/results', { recursive: true })
    writeFileSync('bench/results/first-sync-join.json', JSON.stringify({ at: new Date().toISOString(), ...r }, null, 2))
    return
  }
  // the same bench on a base commit and on this tree, alternately: a shared machine's load moves
  // between runs, so each round measures both under about the same load
  const ref = valueOf('--base') && !valueOf('--base')!.startsWith('--') ? valueOf('--base')! : 'HEAD~1'
  const work = mkdtempSync(join(tmpdir(), 'cairn-bench-join-'))
  const base = join(work, 'base')
  execFileSync('git', ['-C', REPO, 'worktree', 'add', '--detach', base, ref], { stdio: 'ignore' })
  try {
    symlinkSync(join(REPO, 'node_modules'), join(base, 'node_modules'))
    copyFileSync(join(REPO, SELF), join(base, SELF))
    const trees = [
      { label: `base ${execFileSync('git', ['-C', REPO, 'rev-parse', '--short', ref], { encoding: 'utf8' }).trim()}`, path: base },
      { label: 'this tree', path: REPO },
    ]
    const rows: Array<{ tree: string } & JoinResult> = []
    for (let round = 0; round < rounds; round++) {
      for (const tree of round % 2 ? [...trees].reverse() : trees) {
        console.error(`== ${tree.label}: ${notes} notes, round ${round + 1}`)
        rows.push({ tree: tree.label, ...joinIn(tree.path, notes) })
      }
    }
    console.table(rows)
    mkdirSync(join(REPO, 'bench/results'), { recursive: true })
    writeFileSync(join(REPO, 'bench/results/first-sync-join.json'), JSON.stringify({ at: new Date().toISOString(), rows }, null, 2))
  } finally {
    execFileSync('git', ['-C', REPO, 'worktree', 'remove', '--force', base], { stdio: 'ignore' })
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1]?.endsWith('first-sync-join.ts')) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
