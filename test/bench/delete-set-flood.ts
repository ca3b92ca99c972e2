// The sync server, in a process of its own, under floods of sync messages made only of a delete
// set that repeats one range of one client thousands of times, with a room of 5,000 notes: its
// event-loop delay (p50, p99, max) and how long /healthz takes to answer (polled every 25 ms)
// while read sockets and read_write sockets send them as fast as the server reads them.
// Alone: `npx tsx test/bench/delete-set-flood.ts [--quick]` (writes bench/results/delete-set-flood.json).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { ROOTS } from '../../src/sync/layout'
import { applyMemoryWrites, createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { MESSAGE_REFUSAL, readRefusal } from '../../src/sync/refusal'
import { serverInChild, type ServerHandle } from '../load/server-handle'
import { observation, waitFor } from '../sync/fixture'
import { percentile } from './stats'

const ROOM = 'bench-delete-set'
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d

export interface FloodRow {
  scenario: string
  sockets: number
  /** Messages the sockets queued (the server reads them at its pace: the rest wait in the sockets). */
  messagesQueued: number
  kib: number
  refusals: string
  closedSockets: number
  loopP50Ms: number
  loopP99Ms: number
  loopMaxMs: number
  healthzP50Ms: number
  healthzMaxMs: number
  /** /healthz requests that failed (the connection was reset or refused). */
  healthzFailed: number
  /** The server's event loop: the share of the time it ran, %; and the server process's CPU time, ms. */
  serverLoopBusyPct: number
  serverCpuMs: number
  /** The host's 1-minute load average at the end (2 cores: above 2, processes wait for a core). */
  hostLoad: number
}

function client(server: ServerHandle, token: string, doc = createMemoryDoc()): SyncClient {
  return connectMemoryDoc({ serverUrl: server.url, memoryId: ROOM, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 200 })
}

/** A V1 update with no structs, and `times` copies of [clock, clock + len) of `client` as its delete set. */
function repeatedRange(client: number, clock: number, len: number, times: number): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  encoding.writeVarUint(e, 1)
  encoding.writeVarUint(e, client)
  encoding.writeVarUint(e, times)
  for (let i = 0; i < times; i++) {
    encoding.writeVarUint(e, clock)
    encoding.writeVarUint(e, len)
  }
  return encoding.toUint8Array(e)
}

function syncStep2(update: Uint8Array): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  encoding.writeVarUint(e, syncProtocol.messageYjsSyncStep2)
  encoding.writeVarUint8Array(e, update)
  return encoding.toUint8Array(e)
}

/**
 * The room: `notes` live notes of one writer (the range a read flood repeats), and `gone`
 * notes of an owner's device deleted since (all tombstones: the range a no-op flood repeats).
 */
async function seed(server: ServerHandle, notes: number, gone: number): Promise<{ live: { client: number; clock: number }; tombstones: { client: number; clock: number }; watcher: SyncClient }> {
  const writer = client(server, await server.addToken(ROOM, 'read_write', 'seed'))
  await writer.whenSynced(120_000)
  for (let i = 0; i < notes; i += 500) {
    applyMemoryWrites(writer.provider.doc, { observations: { put: Array.from({ length: Math.min(500, notes - i) }, (_, k) => observation(`seed-${i + k}`, { content: 'x'.repeat(200) })) } })
  }
  const owner = client(server, await server.addToken(ROOM, 'full', 'owner'))
  await owner.whenSynced(120_000)
  const doc = owner.provider.doc
  for (let i = 0; i < gone; i += 500) {
    applyMemoryWrites(doc, { observations: { put: Array.from({ length: Math.min(500, gone - i) }, (_, k) => observation(`gone-${i + k}`)) } })
  }
  const tombstones = { client: doc.clientID, clock: Y.getState(doc.store, doc.clientID) }
  doc.transact(() => {
    for (let i = 0; i < gone; i++) doc.getMap(ROOTS.observations).delete(`gone-${i}`)
  })
  const watcher = client(server, await server.addToken(ROOM, 'read', 'seed-watcher'))
  await waitFor('the seed', () => readMemoryDoc(watcher.provider.doc).observations.size === notes, 300_000)
  const live = { client: writer.provider.doc.clientID, clock: Y.getState(writer.provider.doc.store, writer.provider.doc.clientID) }
  writer.destroy()
  owner.destroy()
  // the watcher stays, so the room stays loaded: loading it (and building its copy) is not what is measured
  return { live, tombstones, watcher }
}

/** What the poller runs: plain Node, in a process of its own, so the flooding sockets of this one do not delay its requests. */
const POLLER = `
const url = process.argv[1]
const times = []
let running = true
process.on('message', () => { running = false })
;(async () => {
  while (running) {
    const t = performance.now()
    // a failed request counts as an answer that never came: -1
    const ok = await fetch(url).then((r) => r.text()).then(() => true, () => false)
    times.push(ok ? performance.now() - t : -1)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  process.send(times, () => process.exit(0))
})()
`

/** Polls /healthz every 25 ms, from a child process, until `stop`; the time of each answer, ms. */
function pollHealth(server: ServerHandle): { stop: () => Promise<number[]> } {
  const child = spawn(process.execPath, ['-e', POLLER, `${server.url.replace(/^ws/, 'http')}/healthz`], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const times = new Promise<number[]>((resolve, reject) => {
    child.once('message', (m) => resolve(m as number[]))
    child.once('exit', (code) => reject(new Error(`the /healthz poller exited (${code}) before answering`)))
  })
  return {
    async stop() {
      child.send('stop')
      return times
    },
  }
}

/** Tokens for `sockets` flooding sockets, made before a measurement starts (adding one is the administrator's work, with an fsync). */
async function floodTokens(server: ServerHandle, tier: 'read' | 'read_write', sockets: number, scenario: string): Promise<string[]> {
  return Promise.all(Array.from({ length: sockets }, (_, i) => server.addToken(ROOM, tier, `flood-${scenario}-${i}`)))
}

/** Raw sockets, one per token, that each send `message` as fast as the server reads it, for `seconds`. */
async function flood(server: ServerHandle, tokens: string[], message: Uint8Array, seconds: number) {
  let sent = 0
  const refusals = new Map<string, number>()
  let closed = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(tokens.map((token) => new Promise<void>((resolve) => {
    const ws = new WebSocket(`${server.url}/${ROOM}?token=${encodeURIComponent(token)}`)
    ws.binaryType = 'nodebuffer'
    let open = false
    ws.on('message', (data: Buffer) => {
      const d = decoding.createDecoder(new Uint8Array(data))
      if (decoding.readVarUint(d) === MESSAGE_REFUSAL) {
        const { code } = readRefusal(d)
        refusals.set(code, (refusals.get(code) ?? 0) + 1)
      }
    })
    ws.on('close', () => {
      if (open && performance.now() < until) closed++
      open = false
      resolve()
    })
    ws.on('error', () => undefined)
    ws.on('open', () => {
      open = true
      const pump = () => {
        if (!open) return
        if (performance.now() >= until) return ws.close()
        // keep about 1 MiB queued: as fast as the server reads, no faster
        while (ws.bufferedAmount < 1024 * 1024) {
          ws.send(message)
          sent++
        }
        setTimeout(pump, 5)
      }
      pump()
    })
  })))
  return { sent, refusals: [...refusals].map(([code, n]) => `${n} ${code}`).join(', ') || '0', closed }
}

async function measured(server: ServerHandle, scenario: string, sockets: number, bytes: number, run: () => Promise<{ sent: number; refusals: string; closed: number }>): Promise<FloodRow> {
  // the first request opens the HTTP connection: not part of what is measured
  await fetch(`${server.url.replace(/^ws/, 'http')}/healthz`).then((r) => r.text())
  await server.reset()
  const health = pollHealth(server)
  const r = await run()
  const answers = await health.stop()
  const healthz = answers.filter((t) => t >= 0)
  const { loopDelay, loopUtilization, cpuMs } = await server.stats()
  return {
    scenario, sockets, messagesQueued: r.sent, kib: round((r.sent * bytes) / 1024, 0), refusals: r.refusals, closedSockets: r.closed,
    loopP50Ms: round(loopDelay.p50), loopP99Ms: round(loopDelay.p99), loopMaxMs: round(loopDelay.max),
    healthzP50Ms: round(percentile(healthz, 50)), healthzMaxMs: round(Math.max(...healthz)), healthzFailed: answers.length - healthz.length,
    serverLoopBusyPct: round(loopUtilization * 100), serverCpuMs: round(cpuMs, 0), hostLoad: round(loadavg()[0]!),
  }
}

export async function benchDeleteSetFlood(quick: boolean): Promise<FloodRow[]> {
  const notes = quick ? 1_000 : 5_000
  const gone = quick ? 500 : 2_500
  const seconds = quick ? 3 : 6
  const sockets = quick ? 3 : 10
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-bench-delete-set-'))
  const server = await serverInChild(dataDir, (line) => {
    if (!line.includes('update_refused') && !line.includes('over_budget')) console.error(line)
  })
  const rows: FloodRow[] = []
  try {
    const { live, tombstones, watcher } = await seed(server, notes, gone)
    // one accepted write builds the room's copy (the server's first check of an update), before any measurement
    const warm = client(server, await server.addToken(ROOM, 'read_write', 'warm-up'))
    await warm.whenSynced(120_000)
    applyMemoryWrites(warm.provider.doc, { observations: { put: [observation('warm-up-1')] } })
    await waitFor('the warm-up write', () => readMemoryDoc(watcher.provider.doc).observations.has('warm-up-1'), 120_000)
    warm.destroy()
    // 10,000 repeats of [0, clock) of the live writer: 30 KB, under one message's limit
    const readMessage = syncStep2(repeatedRange(live.client, 0, live.clock, 10_000))
    // 5,000 repeats over the tombstones: 15 KB that change nothing (a no-op)
    const noopMessage = syncStep2(repeatedRange(tombstones.client, 0, tombstones.clock, 5_000))
    rows.push(await measured(server, `idle ${seconds} s, room of ${notes} notes`, 0, 0, async () => {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
      return { sent: 0, refusals: '0', closed: 0 }
    }))
    const readers = await floodTokens(server, 'read', sockets, 'read')
    rows.push(await measured(server, `read: [0, ${live.clock}) x 10,000 (${readMessage.byteLength} B) for ${seconds} s`, sockets, readMessage.byteLength, () => flood(server, readers, readMessage, seconds)))
    const noopWriters = await floodTokens(server, 'read_write', sockets, 'noop')
    rows.push(await measured(server, `read_write no-op: tombstones [0, ${tombstones.clock}) x 5,000 (${noopMessage.byteLength} B) for ${seconds} s`, sockets, noopMessage.byteLength, () => flood(server, noopWriters, noopMessage, seconds)))
    const refusedWriters = await floodTokens(server, 'read_write', sockets, 'refused')
    rows.push(await measured(server, `read_write refused: [0, ${live.clock}) x 10,000 (deletes live notes) for ${seconds} s`, sockets, readMessage.byteLength, () => flood(server, refusedWriters, readMessage, seconds)))
    watcher.destroy()
  } finally {
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick')
  const rows = await benchDeleteSetFlood(quick)
  console.table(rows)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/delete-set-flood.json', JSON.stringify({ at: new Date().toISOString(), node: process.version, quick, rows }, null, 2))
  console.log('wrote bench/results/delete-set-flood.json')
}
