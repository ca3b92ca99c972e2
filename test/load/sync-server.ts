// Load on the sync server: many real y-websocket clients, spread over a few memories, write
// observations at a steady rate for a bounded time, some of them dropping offline and coming
// back. Then writing stops and every client of a memory, and the server's stored room, must
// hold exactly the observations that were written. All on 127.0.0.1; the server runs in this
// process or, to measure it apart from the clients, in a process of its own.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import type { Observation, Tier } from '../../src/core/types'
import { FileRoomStore } from '../../src/server/file-room-store'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { memoryMaps } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { percentile } from '../bench/stats'
import { serverInChild, serverInProcess, startMeter, type ServerHandle, type ServerStats } from './server-handle'

export interface SyncLoadOptions {
  clients: number
  /** How long clients write. */
  durationMs: number
  /** Memories (rooms) the clients are spread over, round robin; default 3. */
  memories?: number
  /** Pause between two writes of one client; default 500 ms (2 writes/s each). */
  writeIntervalMs?: number
  /** Every n-th client drops offline now and then (keeps writing, reconnects); 0 for none; default 5. */
  offlineEvery?: number
  /**
   * Tier of every client's token; default read_write, whose updates the server checks against
   * the room before taking them. `full` skips that check, to see what it costs.
   */
  tier?: Extract<Tier, 'read_write' | 'full'>
  /** `own`: fork the server into a process of its own; default `same` (this process). */
  serverProcess?: 'same' | 'own'
  /** Bound on the wait for convergence once writing stops; default 30 s. */
  convergeTimeoutMs?: number
  /** Progress lines. */
  log?: (line: string) => void
}

export interface SyncLoadResult {
  clients: number
  memories: number
  tier: Tier
  durationMs: number
  /** What the clients would write per second together if nothing lagged. */
  targetUpdatesPerSecond: number
  /** Observations written, and how many of them while the writer was offline. */
  writes: number
  offlineWrites: number
  offlineCycles: number
  /** Writes per second over the writing phase, all clients together. */
  updatesPerSecond: number
  /** A write arriving at another client of its memory counts once per receiving client (until convergence); the rate is per second of writing. */
  deliveries: number
  deliveriesPerSecond: number
  /**
   * Time from a write on one client to its arrival on another, both online throughout
   * (writes made offline, and arrivals at clients that reconnected since, are left out).
   */
  latencyMs: { samples: number; p50: number; p95: number; max: number }
  /** From the end of writing (and offline clients reconnecting) until every client of every memory agrees. */
  convergeMs: number | null
  /**
   * The server's process and the clients' over the writing phase: memory in MiB (peaks sampled
   * every 250 ms, and at the end), event-loop delay in ms. With `serverProcess: 'same'` both
   * are the one process.
   */
  server: ProcessFigures & { separate: boolean }
  clientsProcess: ProcessFigures
  /** Refusals clients received, and warnings or errors the server logged. */
  refusals: number
  serverWarnings: number
  /** Observations in the rooms reopened from the server's store after it stopped. */
  persisted: number
  /** Every disagreement found; empty when every client and the store hold exactly what was written. */
  problems: string[]
}

export interface ProcessFigures {
  peakRssMiB: number
  peakHeapUsedMiB: number
  endRssMiB: number
  endHeapUsedMiB: number
  loopDelayMs: { p50: number; p99: number; max: number }
}

function figures(s: ServerStats): ProcessFigures {
  const mib = (b: number) => round(b / MIB)
  return {
    peakRssMiB: mib(s.peakRss),
    peakHeapUsedMiB: mib(s.peakHeapUsed),
    endRssMiB: mib(s.rss),
    endHeapUsedMiB: mib(s.heapUsed),
    loopDelayMs: { p50: round(s.loopDelay.p50), p99: round(s.loopDelay.p99), max: round(s.loopDelay.max) },
  }
}

interface LoadClient {
  index: number
  room: string
  doc: Y.Doc
  sync: SyncClient
  /** performance.now() of the last (re)connect; arrivals after it at this client may be catch-up. */
  connectedAt: number
  offline: boolean
}

interface Written {
  observation: Observation
  at: number
  offline: boolean
}

const MIB = 1024 * 1024
const round = (x: number) => Math.round(x * 100) / 100
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A valid observation with three entities and two relationships, as an agent would write. */
function loadObservation(room: string, client: number, n: number, at: string): Observation {
  const people = [`Person ${client}`, `Person ${(client + 1) % 7}`]
  const project = `Project ${n % 20}`
  return {
    slug: `${room}-c${client}-${n}`,
    title: `Note ${n} from client ${client}`,
    content: `${people[0]} and ${people[1]} discussed ${project} (note ${n} of client ${client}).`,
    category: 'meeting',
    tags: ['load', `client-${client}`],
    observedAt: at,
    confidence: 1,
    source: '',
    entities: [
      { name: people[0]!, type: 'person', description: `${people[0]} works on ${project}`, queries: [] },
      { name: people[1]!, type: 'person', description: `${people[1]} met ${people[0]}`, queries: [] },
      { name: project, type: 'project', description: `${project} was discussed in note ${n}`, queries: [] },
    ],
    relationships: [
      { source: people[0]!, type: 'works_on', target: project, description: '', weight: 1 },
      { source: people[0]!, type: 'met', target: people[1]!, description: '', weight: 1 },
    ],
    files: [],
    createdBy: `client-${client}`,
    createdAt: at,
    updatedAt: at,
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i])

/** Compares a document's observations with what was written to its room; returns the differences. */
function differences(label: string, doc: Y.Doc, expected: Map<string, Written>): string[] {
  const out: string[] = []
  const snap = readMemoryDoc(doc)
  if (snap.invalid.length) out.push(`${label}: ${snap.invalid.length} invalid entries, e.g. ${snap.invalid[0]!.key}: ${snap.invalid[0]!.reason}`)
  const missing = [...expected.keys()].filter((slug) => !snap.observations.has(slug))
  if (missing.length) out.push(`${label}: ${missing.length} observations missing, e.g. ${missing.slice(0, 3).join(', ')}`)
  const extra = [...snap.observations.keys()].filter((slug) => !expected.has(slug))
  if (extra.length) out.push(`${label}: ${extra.length} observations nobody wrote, e.g. ${extra.slice(0, 3).join(', ')}`)
  const changed = [...expected].filter(([slug, w]) => {
    const got = snap.observations.get(slug)
    return got !== undefined && JSON.stringify(got) !== JSON.stringify(w.observation)
  })
  if (changed.length) out.push(`${label}: ${changed.length} observations differ from what was written, e.g. ${changed[0]![0]}`)
  return out
}

export async function loadSyncServer(options: SyncLoadOptions): Promise<SyncLoadResult> {
  const clientCount = Math.max(1, Math.floor(options.clients))
  const memoryCount = Math.min(clientCount, Math.max(1, Math.floor(options.memories ?? 3)))
  const interval = Math.max(10, options.writeIntervalMs ?? 500)
  const offlineEvery = options.offlineEvery ?? 5
  const convergeTimeoutMs = options.convergeTimeoutMs ?? 30_000
  const tier = options.tier ?? 'read_write'
  const say = options.log ?? (() => {})
  const rooms = Array.from({ length: memoryCount }, (_, i) => `load-m${i}`)

  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-load-'))
  let server: ServerHandle | undefined
  const clients: LoadClient[] = []
  const timers = new Set<NodeJS.Timeout>()
  const written = new Map<string, Map<string, Written>>(rooms.map((r) => [r, new Map()]))
  const latencies: number[] = []
  const problems: string[] = []
  let deliveries = 0
  let refusals = 0
  let offlineWrites = 0
  let offlineCycles = 0
  const meter = startMeter()
  // every provider listens for process exit; the default limit of 10 would warn
  const maxListeners = process.getMaxListeners()
  process.setMaxListeners(Math.max(maxListeners, clientCount + 10))
  let destroyed = false
  const destroyClients = () => {
    if (destroyed) return
    destroyed = true
    for (const c of clients) c.sync.destroy()
  }

  try {
    server = options.serverProcess === 'own' ? await serverInChild(dataDir, say) : await serverInProcess(dataDir, say)
    const serverUrl = server.url
    for (let i = 0; i < clientCount; i++) {
      const room = rooms[i % memoryCount]!
      const token = await server.addToken(room, tier, `load-client-${i}`)
      const doc = createMemoryDoc()
      // crossTab off: clients of one process would otherwise sync over BroadcastChannel, past the server.
      const sync = connectMemoryDoc({ serverUrl, memoryId: room, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 500 })
      const client: LoadClient = { index: i, room, doc, sync, connectedAt: performance.now(), offline: false }
      sync.on('refused', (r) => {
        refusals++
        if (refusals <= 5) say(`client ${i} refused: ${r.code} ${r.message}`)
      })
      memoryMaps(doc).observations.observe((event) => {
        if (event.transaction.origin !== sync.provider) return
        const now = performance.now()
        const mine = written.get(room)!
        for (const [slug, change] of event.changes.keys) {
          if (change.action !== 'add') continue
          const w = mine.get(slug)
          if (!w) continue
          deliveries++
          if (!w.offline && !client.offline && client.connectedAt < w.at) latencies.push(now - w.at)
        }
      })
      clients.push(client)
    }
    await Promise.all(clients.map((c) => c.sync.whenSynced(15_000)))
    say(`${clientCount} clients online over ${memoryCount} memories`)

    // Writing phase: each client writes every `interval` ms (with a staggered start); the
    // offline ones also drop for 1-2 s every few seconds and keep writing meanwhile.
    meter.reset()
    await server.reset()
    const writeStart = performance.now()
    const writeEnd = writeStart + options.durationMs
    let writes = 0
    const schedule = (ms: number, fn: () => void) => {
      const t = setTimeout(() => {
        timers.delete(t)
        fn()
      }, ms)
      timers.add(t)
    }
    for (const c of clients) {
      let n = 0
      const write = () => {
        if (performance.now() >= writeEnd) return
        const at = performance.now()
        const observation = loadObservation(c.room, c.index, n++, new Date().toISOString())
        written.get(c.room)!.set(observation.slug, { observation, at, offline: c.offline })
        if (c.offline) offlineWrites++
        putObservation(c.doc, observation)
        writes++
        schedule(interval, write)
      }
      schedule(Math.floor((interval * c.index) / clientCount), write)
      if (offlineEvery > 0 && c.index % offlineEvery === 0) {
        const drop = () => {
          if (performance.now() >= writeEnd) return
          c.offline = true
          c.sync.disconnect()
          offlineCycles++
          schedule(1_000 + ((c.index * 137) % 1_000), () => {
            c.offline = false
            c.connectedAt = performance.now()
            c.sync.connect()
            schedule(2_000 + ((c.index * 71) % 2_000), drop)
          })
        }
        schedule(1_000 + ((c.index * 53) % 2_000), drop)
      }
    }
    while (performance.now() < writeEnd) await sleep(Math.min(100, Math.max(1, writeEnd - performance.now())))
    for (const t of timers) clearTimeout(t)
    timers.clear()
    const writingMs = performance.now() - writeStart
    const clientStats = meter.stats(0)
    const serverStats = await server.stats()
    say(`wrote ${writes} observations in ${Math.round(writingMs)} ms (${offlineWrites} offline, ${offlineCycles} offline cycles)`)

    // Quiescence: everyone back online, then wait until each memory's clients hold every write.
    for (const c of clients) {
      if (c.offline || c.sync.status.state === 'offline') {
        c.offline = false
        c.connectedAt = performance.now()
        c.sync.connect()
      }
    }
    const stopAt = performance.now()
    const agreed = () => rooms.every((room) => {
      const members = clients.filter((c) => c.room === room)
      const want = written.get(room)!.size
      if (!members.every((c) => c.sync.status.state === 'online' && memoryMaps(c.doc).observations.size === want)) return false
      const sv = Y.encodeStateVector(members[0]!.doc)
      return members.every((c) => sameBytes(Y.encodeStateVector(c.doc), sv))
    })
    let convergeMs: number | null = null
    while (performance.now() - stopAt < convergeTimeoutMs) {
      if (agreed()) {
        convergeMs = performance.now() - stopAt
        break
      }
      await sleep(25)
    }
    if (convergeMs === null) problems.push(`clients did not converge within ${convergeTimeoutMs} ms`)
    else say(`converged ${Math.round(convergeMs)} ms after writing stopped`)

    for (const room of rooms) {
      const members = clients.filter((c) => c.room === room)
      for (const c of members) problems.push(...differences(`client ${c.index} (${room})`, c.doc, written.get(room)!))
    }
    const serverStates = new Map<string, Uint8Array>()
    for (const room of rooms) {
      const state = await server.roomState(room)
      if (state) serverStates.set(room, state)
    }
    const serverWarnings = (await server.stats()).warnings
    const separate = server.separate

    // The store, reopened once the server has stopped, must hold the same.
    destroyClients()
    await server.close()
    server = undefined
    const store = new FileRoomStore(dataDir)
    let persisted = 0
    try {
      for (const room of rooms) {
        const state = await store.load(room)
        if (!state) {
          problems.push(`store: nothing stored for ${room}`)
          continue
        }
        const doc = createMemoryDoc()
        Y.applyUpdate(doc, state)
        persisted += memoryMaps(doc).observations.size
        problems.push(...differences(`store (${room})`, doc, written.get(room)!))
        const member = clients.find((c) => c.room === room)!
        if (!sameBytes(Y.encodeStateVector(doc), Y.encodeStateVector(member.doc))) problems.push(`store (${room}): state vector differs from the clients'`)
        const live = serverStates.get(room)
        if (live) {
          const liveDoc = createMemoryDoc()
          Y.applyUpdate(liveDoc, live)
          if (!sameBytes(Y.encodeStateVector(liveDoc), Y.encodeStateVector(doc))) problems.push(`store (${room}): differs from the room the server held before stopping`)
          liveDoc.destroy()
        }
        doc.destroy()
      }
    } finally {
      await store.close()
    }

    const writingSeconds = writingMs / 1000
    return {
      clients: clientCount,
      memories: memoryCount,
      tier,
      durationMs: options.durationMs,
      targetUpdatesPerSecond: round((clientCount * 1000) / interval),
      writes,
      offlineWrites,
      offlineCycles,
      updatesPerSecond: round(writes / writingSeconds),
      deliveries,
      deliveriesPerSecond: round(deliveries / writingSeconds),
      latencyMs: { samples: latencies.length, p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: round(latencies.reduce((m, x) => Math.max(m, x), 0)) },
      convergeMs: convergeMs === null ? null : Math.round(convergeMs),
      server: { ...figures(serverStats), separate },
      clientsProcess: figures(clientStats),
      refusals,
      serverWarnings,
      persisted,
      problems,
    }
  } finally {
    meter.stop()
    for (const t of timers) clearTimeout(t)
    destroyClients()
    for (const c of clients) c.doc.destroy()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
    process.setMaxListeners(maxListeners)
  }
}
