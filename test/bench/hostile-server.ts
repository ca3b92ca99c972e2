// The sync server under hostile but authenticated load, in a process of its own: its
// event-loop delay idle (the baseline), while read tokens flood it with updates it refuses,
// while a read_write token sends the largest valid updates it takes, and while a device makes
// its first upload of a big memory; each with the limits of one update and the byte budget of
// a connection as they are (`limits: current`) and as they were before them (`limits: none`:
// any update up to 128 MiB in one message, no byte rate), side by side in one run. Then what
// storing each update before relaying it costs a write's delivery.
// Alone: `npx tsx test/bench/hostile-server.ts [--quick]` (writes bench/results/hostile-server.json).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { LIMITS } from '../../src/core/limits'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { applyMemoryWrites, createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { serverInChild, type ChildServerOptions, type ServerHandle } from '../load/server-handle'
import { observation, waitFor } from '../sync/fixture'
import { percentile } from './stats'

export interface HostileRow {
  limits: Limits
  scenario: string
  updates: number
  mib: number
  seconds: number
  refusals: number
  loopDelayP50Ms: number
  loopDelayP99Ms: number
  loopDelayMaxMs: number
}

export interface PersistRow {
  order: string
  writes: number
  deliveryP50Ms: number
  deliveryP95Ms: number
}

type Limits = 'none' | 'current'

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d
const ROOM = 'bench-hostile'
const MiB = 1024 * 1024

/** The server as it was before per-update limits and byte rates: one message took any update up to 128 MiB. */
const NO_LIMITS: ChildServerOptions = {
  maxMessageBytes: 128 * MiB,
  budget: { bytesPerSecond: 1024 * MiB, burstBytes: 1024 * MiB, update: { maxBytes: 128 * MiB, maxStructBytes: 128 * MiB, maxFileBytes: 128 * MiB } },
}

/** Clients of the `none` runs send each update whole, as they did then. */
let clientPieces: number | undefined

function client(server: ServerHandle, token: string, doc = createMemoryDoc()): SyncClient {
  return connectMemoryDoc({ serverUrl: server.url, memoryId: ROOM, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 200, maxUpdateBytes: clientPieces })
}

function note(slug: string, contentChars = 200) {
  return observation(slug, { content: 'x'.repeat(contentChars) })
}

async function seed(server: ServerHandle, observations: number): Promise<void> {
  const writer = client(server, await server.addToken(ROOM, 'read_write', 'seed'))
  await writer.whenSynced(120_000)
  for (let i = 0; i < observations; i += 500) {
    applyMemoryWrites(writer.provider.doc, { observations: { put: Array.from({ length: Math.min(500, observations - i) }, (_, k) => note(`seed-${i + k}`)) } })
  }
  const watcher = client(server, await server.addToken(ROOM, 'read', 'seed-watcher'))
  await waitFor('the seed', () => readMemoryDoc(watcher.provider.doc).observations.size >= observations, 120_000)
  writer.destroy()
  watcher.destroy()
}

/** Connects first (a new client's first sync is not what is measured), then measures `run`. */
async function measured(server: ServerHandle, limits: Limits, scenario: string, prepare: () => Promise<() => Promise<{ updates: number; bytes: number; refusals: number }>>): Promise<HostileRow> {
  const run = await prepare()
  await server.reset()
  const t = performance.now()
  const r = await run()
  const seconds = (performance.now() - t) / 1000
  const { loopDelay } = await server.stats()
  return { limits, scenario, updates: r.updates, mib: round(r.bytes / 2 ** 20), seconds: round(seconds), refusals: r.refusals, loopDelayP50Ms: round(loopDelay.p50), loopDelayP99Ms: round(loopDelay.p99), loopDelayMaxMs: round(loopDelay.max) }
}

/** Read tokens, each sending refused updates until the server closes it for its budget. */
async function readFlood(server: ServerHandle, sockets: number, perSocket: number) {
  const clients = await Promise.all(Array.from({ length: sockets }, async (_, i) => {
    const c = client(server, await server.addToken(ROOM, 'read', `flood-${i}`))
    await c.whenSynced(120_000)
    return c
  }))
  return async () => {
    let bytes = 0
    for (let k = 0; k < perSocket; k++) {
      for (const [i, c] of clients.entries()) {
        const before = Y.encodeStateVector(c.provider.doc)
        putObservation(c.provider.doc, note(`flood-${i}-${k}`, 2_000))
        bytes += Y.encodeStateAsUpdate(c.provider.doc, before).byteLength
      }
    }
    await waitFor('every flooder refused or closed', () => clients.every((c) => c.status.refusals.length > 0 && (c.status.refusals.some((r) => r.code === 'over_budget') || c.status.refusals.length >= perSocket)), 60_000)
    const refusals = clients.reduce((n, c) => n + c.status.refusals.length, 0)
    for (const c of clients) c.destroy()
    return { updates: sockets * perSocket, bytes, refusals }
  }
}

/** A read_write token sending updates of `perUpdate` observations at the content limit, back to back. */
async function largestValid(server: ServerHandle, updates: number, perUpdate: number) {
  const writer = client(server, await server.addToken(ROOM, 'read_write', 'large'))
  const watcher = client(server, await server.addToken(ROOM, 'read', 'large-watcher'))
  await Promise.all([writer.whenSynced(120_000), watcher.whenSynced(120_000)])
  return async () => {
    let bytes = 0
    const start = readMemoryDoc(watcher.provider.doc).observations.size
    for (let u = 0; u < updates; u++) {
      const before = Y.encodeStateVector(writer.provider.doc)
      applyMemoryWrites(writer.provider.doc, { observations: { put: Array.from({ length: perUpdate }, (_, k) => note(`large-${u}-${k}`, LIMITS.contentHardChars)) } })
      bytes += Y.encodeStateAsUpdate(writer.provider.doc, before).byteLength
    }
    await waitFor('the large updates on the watcher', () => readMemoryDoc(watcher.provider.doc).observations.size >= start + updates * perUpdate, 120_000)
    const refusals = writer.status.refusals.length
    writer.destroy()
    watcher.destroy()
    return { updates, bytes, refusals }
  }
}

/** A device with `observations` notes made offline connects and uploads them: its first sync. */
async function firstSync(server: ServerHandle, observations: number) {
  const doc = createMemoryDoc()
  for (let i = 0; i < observations; i += 500) {
    applyMemoryWrites(doc, { observations: { put: Array.from({ length: Math.min(500, observations - i) }, (_, k) => note(`device-${i + k}`, 600)) } })
  }
  const watcher = client(server, await server.addToken(ROOM, 'read', 'first-sync-watcher'))
  await watcher.whenSynced(120_000)
  const token = await server.addToken(ROOM, 'read_write', 'device')
  return async () => {
    const start = readMemoryDoc(watcher.provider.doc).observations.size
    const bytes = Y.encodeStateAsUpdate(doc).byteLength
    const device = client(server, token, doc)
    await waitFor('the device\'s notes on the watcher', () => readMemoryDoc(watcher.provider.doc).observations.size >= start + observations, 300_000)
    const refusals = device.status.refusals.length
    device.destroy()
    watcher.destroy()
    return { updates: 1, bytes, refusals }
  }
}

/** One small write at a time, timed from the writer's transaction to the watcher's copy. */
async function deliveries(server: ServerHandle, writes: number): Promise<number[]> {
  const writer = client(server, await server.addToken(ROOM, 'read_write', 'latency'))
  const watcher = client(server, await server.addToken(ROOM, 'read', 'latency-watcher'))
  await Promise.all([writer.whenSynced(120_000), watcher.whenSynced(120_000)])
  const times: number[] = []
  const observations = watcher.provider.doc.getMap('observations')
  for (let i = 0; i < writes; i++) {
    const slug = `latency-${i}`
    const t = performance.now()
    const arrived = new Promise<void>((resolve) => {
      const check = () => {
        if (observations.has(slug)) {
          observations.unobserve(check)
          resolve()
        }
      }
      observations.observe(check)
    })
    putObservation(writer.provider.doc, note(slug))
    await arrived
    times.push(performance.now() - t)
  }
  writer.destroy()
  watcher.destroy()
  return times
}

export async function benchHostileServer(quick: boolean): Promise<{ load: HostileRow[]; persist: PersistRow[] }> {
  const say = (line: string) => {
    if (!line.includes('update_refused') && !line.includes('over_budget')) console.error(line)
  }
  const load: HostileRow[] = []
  const persist: PersistRow[] = []
  const seedSize = quick ? 500 : 5_000
  const deviceSize = quick ? 2_000 : 10_000
  const runs: Array<{ limits: Limits; persistBeforeBroadcast: boolean }> = [
    { limits: 'none', persistBeforeBroadcast: true },
    { limits: 'current', persistBeforeBroadcast: true },
    { limits: 'current', persistBeforeBroadcast: false },
  ]
  for (const { limits, persistBeforeBroadcast } of runs) {
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-bench-hostile-'))
    const server = await serverInChild(dataDir, say, 120_000, { persistBeforeBroadcast, ...(limits === 'none' ? NO_LIMITS : {}) })
    clientPieces = limits === 'none' ? Number.POSITIVE_INFINITY : undefined
    try {
      await seed(server, seedSize)
      if (persistBeforeBroadcast) {
        load.push(await measured(server, limits, `idle: no traffic for 3 s, room of ${seedSize}`, async () => async () => {
          await new Promise((resolve) => setTimeout(resolve, 3_000))
          return { updates: 0, bytes: 0, refusals: 0 }
        }))
        load.push(await measured(server, limits, `read flood: ${quick ? 5 : 10} read sockets x 40 refused 2 kB notes, room of ${seedSize}`, () => readFlood(server, quick ? 5 : 10, 40)))
        load.push(await measured(server, limits, `read_write: ${quick ? 5 : 20} writes of 50 notes at the 20,000-char limit (1 MB each)`, () => largestValid(server, quick ? 5 : 20, 50)))
        load.push(await measured(server, limits, `first sync: a device uploads ${deviceSize} notes of 600 chars`, () => firstSync(server, deviceSize)))
      }
      if (limits === 'current') {
        const times = await deliveries(server, quick ? 50 : 300)
        persist.push({ order: persistBeforeBroadcast ? 'stored, then relayed (default)' : 'relayed, then stored', writes: times.length, deliveryP50Ms: round(percentile(times, 50)), deliveryP95Ms: round(percentile(times, 95)) })
      }
    } finally {
      clientPieces = undefined
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return { load, persist }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick')
  const r = await benchHostileServer(quick)
  console.table(r.load)
  console.table(r.persist)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/hostile-server.json', JSON.stringify({ at: new Date().toISOString(), node: process.version, quick, ...r }, null, 2))
  console.log('wrote bench/results/hostile-server.json')
}
