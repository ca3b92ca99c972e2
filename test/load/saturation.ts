// Offered load stepped up until a sync server saturates: real y-websocket clients on 127.0.0.1
// write observations at a rising total rate, and each step measures what was delivered, how
// late (write to arrival at another client of the room), and the CPU the server processes spent.
// The same clients and rates run against the plain @y/websocket-server (no tokens, checks or
// persistence) and Cairn's server on its file store or on Redis, so the costs compare in one run.
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebsocketProvider } from 'y-websocket'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { connectRedis, type RedisConnection } from '../../src/server/redis-connection'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { memoryMaps } from '../../src/sync/layout'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { percentile } from '../bench/stats'
import { startRedis, type TestRedis } from '../support/redis'
import type { ServerStats } from './server-handle'
import { loadObservation, startBalancer, startServerProcess, stopServerProcess, type ServerProcess } from './sync-cluster'

export interface SaturationSetup {
  name: string
  server: 'plain' | 'file' | 'redis'
  processes: number
}

export interface SaturationOptions {
  rooms: number
  clientsPerRoom: number
  /** Offered writes per second over all clients, one step each, in order. */
  rates: number[]
  stepMs: number
  /** After a step's last write, how long arrivals are still counted for it. */
  drainMs: number
  /** A step is sustained while its p95 delivery stays under this. */
  p95LimitMs: number
  log?: (line: string) => void
}

export interface SaturationStep {
  offeredPerSecond: number
  writesPerSecond: number
  deliveriesPerSecond: number
  /** Arrivals counted by the end of the drain over arrivals due (writes x other clients of the room). */
  delivered: number
  latencyP50Ms: number
  latencyP95Ms: number
  /** CPU of every server process over the step and its drain, per write and per delivery; ms. */
  serverCpuPerWriteMs: number
  serverCpuPerDeliveryMs: number
  /** Share of one core the server processes used during the step (1 = one core busy). */
  serverCores: number
  /** Share of one core the clients' process used: near 1, the clients, not the server, set the pace. */
  clientCores: number
  serverLoopP99Ms: number
  /** Redis commands processed per write (the server's round trips, pipelined or not); null without Redis. */
  redisCommandsPerWrite: number | null
  sustained: boolean
}

export interface SaturationResult {
  setup: string
  server: SaturationSetup['server']
  processes: number
  clients: number
  rooms: number
  steps: SaturationStep[]
  /** The highest step that was sustained, or null if none was. */
  best: SaturationStep | null
}

interface Written {
  at: number
  step: number
  room: string
}

interface LoadClient {
  room: string
  doc: Y.Doc
  close(): void
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits

async function redisCommands(admin: RedisConnection): Promise<number> {
  const info = String(await admin.command.sendCommand(['INFO', 'stats']))
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN)
}

export async function loadSaturation(setup: SaturationSetup, options: SaturationOptions): Promise<SaturationResult> {
  const say = options.log ?? (() => {})
  const rooms = Array.from({ length: options.rooms }, (_, i) => `saturation-m${i}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-saturation-'))
  const servers: ServerProcess[] = []
  const clients: LoadClient[] = []
  const written = new Map<string, Written>()
  const latencies: number[][] = options.rates.map(() => [])
  const arrivals = options.rates.map(() => 0)
  let redis: TestRedis | undefined
  let admin: RedisConnection | undefined
  let balancer: Server | undefined
  const maxListeners = process.getMaxListeners()
  process.setMaxListeners(Math.max(maxListeners, options.rooms * options.clientsPerRoom + 20))
  try {
    if (setup.server === 'redis') {
      redis = await startRedis()
      admin = await connectRedis(redis.url, { durability: 'trust' })
    }
    for (let i = 0; i < setup.processes; i++) {
      servers.push(await startServerProcess(i, { dataDir: join(dataDir, `server-${i}`), redis: redis?.url, plain: setup.server === 'plain' }, say))
    }
    let url = servers[0]!.url
    if (servers.length > 1) {
      const lb = await startBalancer(() => servers, () => {})
      balancer = lb.server
      url = lb.url
    }

    for (const room of rooms) {
      for (let k = 0; k < options.clientsPerRoom; k++) {
        const doc = createMemoryDoc()
        memoryMaps(doc).observations.observe((event) => {
          if (event.transaction.local) return
          const now = performance.now()
          for (const [slug, change] of event.changes.keys) {
            if (change.action !== 'add') continue
            const w = written.get(slug)
            if (!w) continue
            arrivals[w.step]!++
            latencies[w.step]!.push(now - w.at)
          }
        })
        if (setup.server === 'plain') {
          const provider = new WebsocketProvider(url, room, doc, { disableBc: true, WebSocketPolyfill: WebSocket as never })
          await new Promise<void>((resolve) => provider.once('sync', () => resolve()))
          clients.push({ room, doc, close: () => { provider.destroy(); provider.awareness.destroy() } })
        } else {
          const token = await servers[0]!.request<string>({ type: 'token', memoryId: room, agent: `saturation-${room}-${k}` })
          const sync: SyncClient = connectMemoryDoc({ serverUrl: url, memoryId: room, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 300 })
          await sync.whenSynced(30_000)
          clients.push({ room, doc, close: () => sync.destroy() })
        }
      }
    }
    say(`${setup.name}: ${clients.length} clients online over ${rooms.length} rooms`)

    const steps: SaturationStep[] = []
    let n = 0
    for (let step = 0; step < options.rates.length; step++) {
      const rate = options.rates[step]!
      await Promise.all(servers.map((s) => s.request({ type: 'reset' })))
      const redisBefore = admin ? await redisCommands(admin) : 0
      const clientCpuFrom = process.cpuUsage()
      const started = performance.now()
      let writes = 0
      // Writes due by now at the offered rate, issued on a short tick, round robin over the clients.
      while (performance.now() - started < options.stepMs) {
        const due = Math.floor(((performance.now() - started) / 1000) * rate)
        while (writes < due) {
          const index = n++
          const client = clients[index % clients.length]!
          const observation = loadObservation(client.room, index % clients.length, index)
          written.set(observation.slug, { at: performance.now(), step, room: client.room })
          putObservation(client.doc, observation)
          writes++
        }
        await sleep(5)
      }
      const seconds = (performance.now() - started) / 1000
      const due = writes * (options.clientsPerRoom - 1)
      const drainUntil = performance.now() + options.drainMs
      while (arrivals[step]! < due && performance.now() < drainUntil) await sleep(20)
      const elapsed = (performance.now() - started) / 1000
      const clientCpu = process.cpuUsage(clientCpuFrom)
      const stats = await Promise.all(servers.map((s) => s.request<ServerStats>({ type: 'stats' })))
      const serverCpuMs = stats.reduce((sum, s) => sum + s.cpuMs, 0)
      const redisAfter = admin ? await redisCommands(admin) : 0
      const lat = latencies[step]!
      const p95 = lat.length ? percentile(lat, 95) : Infinity
      const delivered = due ? arrivals[step]! / due : 1
      const row: SaturationStep = {
        offeredPerSecond: rate,
        writesPerSecond: round(writes / seconds, 1),
        deliveriesPerSecond: round(arrivals[step]! / elapsed, 1),
        delivered: round(delivered, 4),
        latencyP50Ms: lat.length ? round(percentile(lat, 50), 1) : NaN,
        latencyP95Ms: round(p95, 1),
        serverCpuPerWriteMs: writes ? round(serverCpuMs / writes, 3) : NaN,
        serverCpuPerDeliveryMs: arrivals[step] ? round(serverCpuMs / arrivals[step]!, 3) : NaN,
        serverCores: round(serverCpuMs / 1000 / elapsed),
        clientCores: round((clientCpu.user + clientCpu.system) / 1e6 / elapsed),
        serverLoopP99Ms: round(Math.max(...stats.map((s) => s.loopDelay.p99)), 1),
        redisCommandsPerWrite: admin && writes ? round((redisAfter - redisBefore) / writes, 2) : null,
        sustained: p95 <= options.p95LimitMs && delivered >= 0.99 && writes / seconds >= 0.95 * rate,
      }
      steps.push(row)
      say(`${setup.name}: offered ${rate}/s, wrote ${row.writesPerSecond}/s, p95 ${row.latencyP95Ms} ms, delivered ${row.delivered}, server ${row.serverCores} cores, clients ${row.clientCores} cores`)
      if (!row.sustained) break
      // Let what is still in flight settle before the next step starts.
      await sleep(500)
    }
    const sustained = steps.filter((s) => s.sustained)
    return {
      setup: setup.name,
      server: setup.server,
      processes: setup.processes,
      clients: clients.length,
      rooms: rooms.length,
      steps,
      best: sustained.at(-1) ?? null,
    }
  } finally {
    for (const c of clients) c.close()
    balancer?.close()
    await Promise.all(servers.map((s) => stopServerProcess(s)))
    await admin?.close()
    await redis?.stop()
    process.setMaxListeners(maxListeners)
    rmSync(dataDir, { recursive: true, force: true })
  }
}
