// Load on several sync-server processes behind one TCP load balancer (round robin, not
// sticky), sharing rooms through Redis, or one server on its data directory: real y-websocket
// clients write observations for a bounded time while, optionally, one server is SIGKILLed
// (and a replacement started) and Redis is SIGKILLed and restarted. Whatever a peer had
// received before a fault must be in Redis right after it; at the end every client and a
// fresh server's load of each room must hold exactly what was written. All on 127.0.0.1.
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import type { Observation } from '../../src/core/types'
import { FileRoomStore } from '../../src/server/file-room-store'
import { silentLog } from '../../src/server/log'
import { RedisAccess } from '../../src/server/redis-access'
import { connectRedis, type RedisConnection } from '../../src/server/redis-connection'
import { RedisRoomStore } from '../../src/server/redis-room-store'
import { startSyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { memoryMaps } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { percentile } from '../bench/stats'
import { startRedis, type TestRedis } from '../support/redis'
import type { ClusterServerArgs, ClusterServerRequest } from './cluster-server-process'
import type { ServerStats } from './server-handle'

export interface ClusterLoadOptions {
  /** `file`: one server on its data directory; `redis`: `servers` processes on one Redis. */
  backend: 'file' | 'redis'
  servers: number
  clients: number
  memories: number
  durationMs: number
  /** Pause between two writes of one client; default 500 ms. */
  writeIntervalMs?: number
  /** SIGKILL server 0 this long into the writing (a replacement joins 1.5 s later). */
  killServerAtMs?: number
  /** SIGKILL Redis this long into the writing, and start it again after `redisDownMs` (default 500). */
  restartRedisAtMs?: number
  redisDownMs?: number
  /** After writing: revoke tokens held by a client on every server, and time it. */
  checkRevoke?: boolean
  convergeTimeoutMs?: number
  log?: (line: string) => void
}

export interface ClusterLoadResult {
  backend: 'file' | 'redis'
  servers: number
  clients: number
  memories: number
  durationMs: number
  writes: number
  writesPerSecond: number
  deliveries: number
  deliveriesPerSecond: number
  /** Write on one client to arrival on another, both connected throughout; ms. */
  latencyMs: { samples: number; p50: number; p95: number; max: number }
  convergeMs: number | null
  /** Event-loop delay of each server process that lived through the writing, ms. */
  serverLoopDelayMs: Array<{ p50: number; p99: number; max: number }>
  serverPeakRssMiB: number[]
  /** Writes a peer had received before each fault, and how many of them Redis lacked right after it. */
  faults: Array<{ fault: string; atMs: number; acknowledged: number; missing: number }>
  /** Clients first connected to the server that was killed (they finish on others). */
  clientsOnKilledServer: number
  /**
   * Three revokes, each of a token with a socket on every live server: from the revoke call
   * until each server closed it (on that server's clock; NaN if it did not), and until each
   * client saw the close (4410); ms.
   */
  revokeTrials: Array<{ servers: number[]; clients: number[] }> | null
  refusals: number
  persisted: number
  problems: string[]
}

interface Written {
  at: number
  /** performance.now() when a peer first received it. */
  ackAt: number | null
}

interface LoadClient {
  index: number
  room: string
  doc: Y.Doc
  sync: SyncClient
  connectedAt: number
  /** The backend its first socket went to. */
  servers: Set<number>
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

const CHILD = fileURLToPath(new URL('./cluster-server-process.ts', import.meta.url))
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const round = (x: number) => Math.round(x * 100) / 100

export interface ServerProcess {
  index: number
  url: string
  port: number
  child: ChildProcess
  alive: boolean
  request<T>(m: DistributiveOmit<ClusterServerRequest, 'id'>): Promise<T>
  exited: Promise<void>
}

export async function startServerProcess(index: number, args: ClusterServerArgs, say: (l: string) => void): Promise<ServerProcess> {
  // CAIRN_SERVER_PROF=<dir>: each server process writes a V8 CPU profile there when it exits
  const profile = process.env.CAIRN_SERVER_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.CAIRN_SERVER_PROF] : []
  // CAIRN_SERVER_FLAGS="--trace-gc ...": more Node flags for each server process (Node refuses some of them in NODE_OPTIONS)
  const flags = process.env.CAIRN_SERVER_FLAGS?.split(' ').filter(Boolean) ?? []
  const child = fork(CHILD, [JSON.stringify(args)], { execArgv: ['--import', 'tsx', ...profile, ...flags], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let next = 0
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    for (const p of pending.values()) p.reject(new Error(`server ${index} exited`))
    pending.clear()
    resolve()
  }))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server ${index} did not start within 30 s`)), 30_000)
    child.once('exit', (code) => reject(new Error(`server ${index} exited (${code}) before it was ready`)))
    child.on('message', (m: { type?: string; url?: string; line?: string; id?: number; ok?: boolean; value?: unknown; error?: string }) => {
      if (m.type === 'ready') {
        clearTimeout(timer)
        resolve(m.url!)
      } else if (m.type === 'log') say(`server ${index}: ${m.line}`)
      else if (typeof m.id === 'number') {
        const p = pending.get(m.id)
        pending.delete(m.id)
        if (m.ok) p?.resolve(m.value)
        else p?.reject(new Error(m.error))
      }
    })
  })
  const proc: ServerProcess = {
    index,
    url,
    port: Number(new URL(url).port),
    child,
    alive: true,
    exited,
    request: <T>(m: DistributiveOmit<ClusterServerRequest, 'id'>) => new Promise<T>((resolve, reject) => {
      const id = next++
      const timer = setTimeout(() => reject(new Error(`server ${index} did not answer ${m.type}`)), 60_000)
      pending.set(id, { resolve: (v) => { clearTimeout(timer); resolve(v as T) }, reject: (e) => { clearTimeout(timer); reject(e) } })
      child.send({ ...m, id })
    }),
  }
  return proc
}

export async function stopServerProcess(s: ServerProcess): Promise<void> {
  if (s.alive) {
    s.alive = false
    await s.request({ type: 'close' }).catch(() => {})
  }
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 5_000)
  await s.exited
  clearTimeout(timer)
}

/** A TCP load balancer: each new connection goes to the next live backend, round robin. */
export function startBalancer(backends: () => ServerProcess[], onRoute: (socket: Socket, backend: number) => void): Promise<{ server: Server; url: string }> {
  let turn = 0
  const server = createServer((socket) => {
    socket.on('error', () => {})
    const live = backends().filter((b) => b.alive)
    const tryNext = (left: number) => {
      if (left === 0 || live.length === 0) return socket.destroy()
      const b = live[turn++ % live.length]!
      const upstream = connect(b.port, '127.0.0.1')
      upstream.once('error', () => {
        upstream.destroy()
        if (!socket.destroyed && upstream.bytesWritten === 0) tryNext(left - 1)
        else socket.destroy()
      })
      upstream.once('connect', () => {
        onRoute(socket, b.index)
        socket.pipe(upstream)
        upstream.pipe(socket)
        socket.once('close', () => upstream.destroy())
        upstream.once('close', () => socket.destroy())
      })
    }
    tryNext(live.length)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const address = server.address()
    resolve({ server, url: `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` })
  }))
}

export function loadObservation(room: string, client: number, n: number): Observation {
  const at = new Date().toISOString()
  const person = `Person ${client}`
  const project = `Project ${n % 20}`
  return {
    slug: `${room}-c${client}-${n}`,
    title: `Note ${n} from client ${client}`,
    content: `${person} worked on ${project} (note ${n}).`,
    category: 'meeting',
    tags: ['cluster'],
    observedAt: at,
    confidence: 1,
    source: '',
    entities: [
      { name: person, type: 'person', description: `${person} works on ${project}`, queries: [] },
      { name: project, type: 'project', description: `${project} was discussed`, queries: [] },
    ],
    relationships: [{ source: person, type: 'works_on', target: project, description: '', weight: 1 }],
    files: [],
    createdBy: `client-${client}`,
    createdAt: at,
    updatedAt: at,
  }
}

function missingFrom(doc: Y.Doc, slugs: Iterable<string>): string[] {
  const have = readMemoryDoc(doc).observations
  return [...slugs].filter((s) => !have.has(s))
}

export async function loadSyncCluster(options: ClusterLoadOptions): Promise<ClusterLoadResult> {
  const say = options.log ?? (() => {})
  const interval = options.writeIntervalMs ?? 500
  const rooms = Array.from({ length: options.memories }, (_, i) => `cluster-m${i}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-cluster-'))
  const problems: string[] = []
  const faults: ClusterLoadResult['faults'] = []
  const written = new Map<string, Map<string, Written>>(rooms.map((r) => [r, new Map()]))
  const latencies: number[] = []
  let deliveries = 0
  let refusals = 0
  let redis: TestRedis | undefined
  let admin: RedisConnection | undefined
  const servers: ServerProcess[] = []
  const clients: LoadClient[] = []
  let balancer: Server | undefined
  const timers = new Set<NodeJS.Timeout>()
  const maxListeners = process.getMaxListeners()
  process.setMaxListeners(Math.max(maxListeners, options.clients + 20))

  // Which backend each client's newest socket reached, matched by the balancer's accept order.
  const routed: Array<(backend: number) => void> = []

  /** Every acknowledged write of every room is in what the given Redis holds. */
  async function checkRedisHolds(fault: string, atMs: number, acknowledged: Map<string, string[]>, url = redis!.url): Promise<void> {
    const conn = await connectRedis(url, { durability: 'trust' })
    try {
      const store = new RedisRoomStore(conn)
      let count = 0
      let missing = 0
      for (const [room, slugs] of acknowledged) {
        count += slugs.length
        const doc = createMemoryDoc()
        const state = await store.load(room)
        if (state) Y.applyUpdate(doc, state)
        const lost = missingFrom(doc, slugs)
        missing += lost.length
        if (lost.length) problems.push(`after ${fault}: ${lost.length} acknowledged writes of ${room} missing from Redis, e.g. ${lost.slice(0, 3).join(', ')}`)
      }
      faults.push({ fault, atMs: Math.round(atMs), acknowledged: count, missing })
      say(`${fault}: ${count} acknowledged writes, ${missing} missing from Redis`)
    } finally {
      await conn.close()
    }
  }

  const acknowledgedNow = () => new Map(rooms.map((room) => [room, [...written.get(room)!].filter(([, w]) => w.ackAt !== null).map(([slug]) => slug)]))

  try {
    if (options.backend === 'redis') {
      redis = await startRedis()
      admin = await connectRedis(redis.url, { durability: 'trust' })
    }
    const args = (i: number): ClusterServerArgs => ({ dataDir: join(dataDir, `server-${i}`), redis: redis?.url })
    servers.push(...(await Promise.all(Array.from({ length: options.servers }, (_, i) => startServerProcess(i, args(i), say)))))
    say(`${servers.length} ${options.backend} server(s) up`)
    const lb = await startBalancer(() => servers, (_socket, backend) => routed.shift()?.(backend))
    balancer = lb.server
    const access = admin ? await RedisAccess.open(admin, { watch: false }) : undefined
    const addToken = async (room: string, agent: string) => access ? (await access.add({ memoryId: room, agent })).token : servers[0]!.request<string>({ type: 'token', memoryId: room, agent })

    for (let i = 0; i < options.clients; i++) {
      const room = rooms[i % rooms.length]!
      const doc = createMemoryDoc()
      const token = await addToken(room, `cluster-client-${i}`)
      const client: LoadClient = { index: i, room, doc, sync: undefined as unknown as SyncClient, connectedAt: performance.now(), servers: new Set() }
      // The balancer accepts sockets in the order clients open them; one client at a time.
      const routedHere = new Promise<void>((resolve) => routed.push((b) => {
        client.servers.add(b)
        resolve()
      }))
      client.sync = connectMemoryDoc({ serverUrl: lb.url, memoryId: room, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 300 })
      await routedHere
      client.sync.on('refused', (r) => {
        refusals++
        if (refusals <= 3) say(`client ${i} refused: ${r.code} ${r.message}`)
      })
      let wasOnline = true
      client.sync.on('status', (s) => {
        // Arrivals after a reconnect may be catch-up, not relay: they are left out of the latency.
        if (s.state === 'online' && !wasOnline) client.connectedAt = performance.now()
        wasOnline = s.state === 'online'
      })
      memoryMaps(doc).observations.observe((event) => {
        if (event.transaction.origin !== client.sync.provider) return
        const now = performance.now()
        for (const [slug, change] of event.changes.keys) {
          if (change.action !== 'add') continue
          const w = written.get(room)!.get(slug)
          if (!w) continue
          deliveries++
          w.ackAt ??= now
          if (client.connectedAt < w.at) latencies.push(now - w.at)
        }
      })
      clients.push(client)
    }
    await Promise.all(clients.map((c) => c.sync.whenSynced(20_000)))
    // Later sockets (reconnects) are not matched to clients one by one; count them per backend.
    routed.length = 0
    say(`${clients.length} clients online over ${rooms.length} memories`)

    await Promise.all(servers.map((s) => s.request({ type: 'reset' })))
    const start = performance.now()
    const end = start + options.durationMs
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
        if (performance.now() >= end) return
        const observation = loadObservation(c.room, c.index, n++)
        written.get(c.room)!.set(observation.slug, { at: performance.now(), ackAt: null })
        putObservation(c.doc, observation)
        writes++
        schedule(interval, write)
      }
      schedule(Math.floor((interval * c.index) / clients.length), write)
    }

    const events: Array<{ at: number; run: () => Promise<void>; alone?: boolean }> = []
    if (options.killServerAtMs !== undefined && servers.length > 1) {
      events.push({
        at: options.killServerAtMs,
        run: async () => {
          const victim = servers[0]!
          victim.alive = false
          victim.child.kill('SIGKILL')
          await victim.exited
          // The dead server adds nothing now: what its peers got before must already be in Redis.
          await checkRedisHolds(`SIGKILL of server ${victim.index}`, performance.now() - start, acknowledgedNow())
        },
      })
      events.push({
        at: options.killServerAtMs + 1_500,
        alone: true,
        run: async () => {
          const replacement = await startServerProcess(servers.length, args(servers.length), say)
          servers.push(replacement)
          await replacement.request({ type: 'reset' })
          say(`replacement server ${replacement.index} up`)
        },
      })
    }
    if (options.restartRedisAtMs !== undefined && redis) {
      events.push({
        at: options.restartRedisAtMs,
        run: async () => {
          await redis!.kill()
          // What survived the kill, set aside before the servers can re-send anything.
          const survived = await redis!.copy()
          try {
            await sleep(options.redisDownMs ?? 500)
            // Everything a peer received up to now, the outage included, must be in what survived.
            const acknowledged = acknowledgedNow()
            await redis!.start()
            await checkRedisHolds('SIGKILL and restart of Redis', performance.now() - start, acknowledged, survived.url)
          } finally {
            await survived.stop()
          }
        },
      })
    }
    // Each fault runs on its own clock: a slow replacement start does not delay a Redis restart.
    // Faults and their checks run one after another (a check must not meet the next fault).
    let chain = Promise.resolve()
    const running = events.map(async (e) => {
      const wait = start + e.at - performance.now()
      if (wait > 0) await sleep(wait)
      if (e.alone) return e.run()
      const mine = chain.then(e.run)
      chain = mine.catch(() => {})
      return mine
    })
    const faultsDone = Promise.allSettled(running)
    while (performance.now() < end) await sleep(Math.min(100, end - performance.now()))
    for (const t of timers) clearTimeout(t)
    timers.clear()
    const writingMs = performance.now() - start
    for (const r of await faultsDone) if (r.status === 'rejected') problems.push(`fault: ${(r.reason as Error).message}`)
    const live = servers.filter((s) => s.alive)
    const stats = await Promise.all(live.map((s) => s.request<ServerStats>({ type: 'stats' })))
    say(`wrote ${writes} observations in ${Math.round(writingMs)} ms`)

    const stopAt = performance.now()
    const convergeTimeoutMs = options.convergeTimeoutMs ?? 30_000
    const agreed = () => rooms.every((room) => {
      const members = clients.filter((c) => c.room === room)
      const want = written.get(room)!.size
      return members.every((c) => c.sync.status.state === 'online' && memoryMaps(c.doc).observations.size === want)
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
    for (const c of clients) {
      const lost = missingFrom(c.doc, written.get(c.room)!.keys())
      if (lost.length) problems.push(`client ${c.index} (${c.room}): ${lost.length} writes missing, e.g. ${lost.slice(0, 3).join(', ')}`)
      const extra = memoryMaps(c.doc).observations.size - written.get(c.room)!.size + lost.length
      if (extra) problems.push(`client ${c.index} (${c.room}): ${extra} observations nobody wrote`)
    }

    // The load's clients are done: close them so the revokes are timed on a quieter machine.
    for (const c of clients) c.sync.destroy()
    let revokeTrials: ClusterLoadResult['revokeTrials'] = null
    if (options.checkRevoke && access) {
      revokeTrials = []
      const targets = servers.filter((s) => s.alive)
      for (let trial = 0; trial < 3; trial++) {
        const leaver = await access.add({ memoryId: rooms[0]!, agent: `leaver-${trial}` })
        const sockets = targets.map((s) => connectMemoryDoc({ serverUrl: s.url, memoryId: rooms[0]!, token: leaver.token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false }))
        try {
          await Promise.all(sockets.map((c) => c.whenSynced(10_000)))
          const before = await Promise.all(targets.map((s) => s.request<number[]>({ type: 'revocations' })))
          const seen: number[] = []
          let revokedAt = 0
          for (const c of sockets) c.on('status', (st) => { if (st.state === 'denied' && st.closed?.code === CLOSE.revoked) seen.push(performance.now() - revokedAt) })
          const epochBefore = performance.timeOrigin + performance.now()
          revokedAt = performance.now()
          await access.revoke(leaver.connection.id)
          const deadline = performance.now() + 5_000
          while (seen.length < sockets.length && performance.now() < deadline) await sleep(2)
          if (seen.length < sockets.length) problems.push(`revoke ${trial}: only ${seen.length} of ${sockets.length} sockets closed within 5 s`)
          const after = await Promise.all(targets.map((s) => s.request<number[]>({ type: 'revocations' })))
          const onServers = after.map((times, i) => (times.length > before[i]!.length ? round(times.at(-1)! - epochBefore) : Number.NaN))
          revokeTrials.push({ servers: onServers, clients: seen.map(round) })
        } finally {
          for (const c of sockets) c.destroy()
        }
      }
    }

    // A fresh server's load of each room: the data directory (after the server stops) or Redis.
    let persisted = 0
    const loaded = new Map<string, Uint8Array | null>()
    if (redis) {
      const fresh = await startSyncServer({ dataDir: join(dataDir, 'fresh'), port: 0, redis: redis.url, log: silentLog })
      try {
        for (const room of rooms) loaded.set(room, await fresh.roomState(room))
      } finally {
        await fresh.close()
      }
    } else {
      for (const s of servers) await stopServerProcess(s)
      const store = new FileRoomStore(join(dataDir, 'server-0'))
      for (const room of rooms) loaded.set(room, await store.load(room))
      await store.close()
    }
    for (const room of rooms) {
      const doc = createMemoryDoc()
      const state = loaded.get(room)
      if (state) Y.applyUpdate(doc, state)
      const have = memoryMaps(doc).observations.size
      persisted += have
      const lost = missingFrom(doc, written.get(room)!.keys())
      if (lost.length) problems.push(`fresh load of ${room}: ${lost.length} writes missing, e.g. ${lost.slice(0, 3).join(', ')}`)
      if (have - written.get(room)!.size + lost.length) problems.push(`fresh load of ${room}: observations nobody wrote`)
    }

    const sorted = [...latencies].sort((a, b) => a - b)
    const seconds = writingMs / 1000
    return {
      backend: options.backend,
      servers: options.servers,
      clients: options.clients,
      memories: options.memories,
      durationMs: options.durationMs,
      writes,
      writesPerSecond: round(writes / seconds),
      deliveries,
      deliveriesPerSecond: round(deliveries / seconds),
      latencyMs: { samples: sorted.length, p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), max: round(sorted.at(-1) ?? 0) },
      convergeMs: convergeMs === null ? null : Math.round(convergeMs),
      serverLoopDelayMs: stats.map((s) => ({ p50: round(s.loopDelay.p50), p99: round(s.loopDelay.p99), max: round(s.loopDelay.max) })),
      serverPeakRssMiB: stats.map((s) => round(s.peakRss / 1024 / 1024)),
      faults,
      clientsOnKilledServer: options.killServerAtMs !== undefined && servers.length > 1 ? clients.filter((c) => c.servers.has(0)).length : 0,
      revokeTrials,
      refusals,
      persisted,
      problems,
    }
  } finally {
    for (const t of timers) clearTimeout(t)
    for (const c of clients) c.sync?.destroy()
    balancer?.close()
    await Promise.all(servers.map((s) => stopServerProcess(s)))
    await admin?.close()
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
    process.setMaxListeners(maxListeners)
  }
}
