// The sync server as the load run drives it: in this process, or forked into its own (so its
// memory and event loop are measured apart from the clients', and it gets a core of its own).
import { fork, type ChildProcess } from 'node:child_process'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { Tier } from '../../src/core/types'
import type { SyncLog } from '../../src/server/log'
import { startSyncServer, type SyncServerOptions } from '../../src/server/sync-server'

export interface ServerStats {
  /** Process figures, bytes; peaks since the last reset, sampled every 250 ms. */
  rss: number
  heapUsed: number
  peakRss: number
  peakHeapUsed: number
  /** Warnings and errors the server logged. */
  warnings: number
  /** Event-loop delay of the server's process since the last reset, ms. */
  loopDelay: { p50: number; p99: number; max: number }
  /**
   * Since the last reset: the share of time the event loop was running (not waiting for I/O),
   * and the process's CPU time (every thread), ms. A loop that waits most of the time yet is
   * late by much was kept off the CPU by other processes, not by its own work.
   */
  loopUtilization: number
  cpuMs: number
}

export type ServerRequest =
  | { id: number; type: 'token'; memoryId: string; tier: Tier; agent: string }
  | { id: number; type: 'stats' }
  | { id: number; type: 'reset' }
  | { id: number; type: 'roomState'; room: string }
  | { id: number; type: 'close' }

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never

/** Memory peaks and event-loop delay of the process it runs in. */
export interface Meter {
  reset(): void
  stats(warnings: number): ServerStats
  stop(): void
}

export function startMeter(): Meter {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  let peakRss = 0
  let peakHeapUsed = 0
  let loopSince = performance.eventLoopUtilization()
  let cpuSince = process.cpuUsage()
  const sample = () => {
    const m = process.memoryUsage()
    peakRss = Math.max(peakRss, m.rss)
    peakHeapUsed = Math.max(peakHeapUsed, m.heapUsed)
    return m
  }
  const timer = setInterval(sample, 250)
  timer.unref()
  return {
    reset() {
      delay.reset()
      loopSince = performance.eventLoopUtilization()
      cpuSince = process.cpuUsage()
      peakRss = 0
      peakHeapUsed = 0
      sample()
    },
    stats(warnings) {
      const { rss, heapUsed } = sample()
      const cpu = process.cpuUsage(cpuSince)
      return {
        rss, heapUsed, peakRss, peakHeapUsed, warnings,
        loopDelay: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
        loopUtilization: performance.eventLoopUtilization(loopSince).utilization,
        cpuMs: (cpu.user + cpu.system) / 1000,
      }
    },
    stop() {
      clearInterval(timer)
      delay.disable()
    },
  }
}

/** Counts the server's warnings and errors and passes the first few on. */
export function countingLog(say: (line: string) => void): { log: SyncLog; count: () => number } {
  let warnings = 0
  const log: SyncLog = (level, event, fields) => {
    if (level === 'info') return
    warnings++
    if (warnings <= 5) say(`server ${level}: ${event} ${JSON.stringify(fields ?? {})}`)
  }
  return { log, count: () => warnings }
}

export interface ServerHandle {
  url: string
  /** True when the server runs in a process of its own. */
  separate: boolean
  addToken(memoryId: string, tier: Tier, agent: string): Promise<string>
  /** Starts the measurement window (peaks and event-loop delay) afresh. */
  reset(): Promise<void>
  stats(): Promise<ServerStats>
  roomState(room: string): Promise<Uint8Array | null>
  /** Stops the server; safe to call more than once. */
  close(): Promise<void>
}

export async function serverInProcess(dataDir: string, say: (line: string) => void): Promise<ServerHandle> {
  const { log, count } = countingLog(say)
  const server = await startSyncServer({ dataDir, port: 0, log })
  const meter = startMeter()
  return {
    url: server.url,
    separate: false,
    addToken: async (memoryId, tier, agent) => server.tokens.add({ memoryId, tier, agent }).token,
    reset: async () => meter.reset(),
    stats: async () => meter.stats(count()),
    roomState: (room) => server.roomState(room),
    close() {
      meter.stop()
      return server.close()
    },
  }
}

/** Server options that travel to the child as JSON (the benches compare settings). */
export type ChildServerOptions = Pick<SyncServerOptions, 'persistBeforeBroadcast' | 'budget' | 'maxMessageBytes'>

const CHILD = fileURLToPath(new URL('./sync-server-process.ts', import.meta.url))

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }

/**
 * `answerTimeoutMs` bounds every request; it is generous because an overloaded server answers
 * only once it has worked through the updates queued before the request.
 */
export async function serverInChild(dataDir: string, say: (line: string) => void, answerTimeoutMs = 120_000, options: ChildServerOptions = {}): Promise<ServerHandle> {
  const startTimeoutMs = 15_000
  // CAIRN_SERVER_CPU_PROF=<dir> writes a CPU profile of the server process there, to see where its time goes
  const profile = process.env.CAIRN_SERVER_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.CAIRN_SERVER_CPU_PROF] : []
  const child: ChildProcess = fork(CHILD, [dataDir, JSON.stringify(options)], { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let nextId = 0
  let exited = false
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true
    for (const p of pending.values()) p.reject(new Error('the sync server process exited'))
    pending.clear()
    resolve()
  }))
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the sync server process did not start within ${startTimeoutMs} ms`)), startTimeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the sync server process exited (${code}) before it was ready`))
    })
    child.on('message', (m: { type?: string; url?: string; line?: string } & Partial<Reply>) => {
      if (m.type === 'ready') {
        clearTimeout(timer)
        resolve(m.url!)
      } else if (m.type === 'log') say(m.line!)
      else if (typeof m.id === 'number') {
        const p = pending.get(m.id)
        pending.delete(m.id)
        if (m.ok) p?.resolve(m.value)
        else p?.reject(new Error((m as { error: string }).error))
      }
    })
  })
  const request = <T>(message: WithoutId<ServerRequest>): Promise<T> => {
    if (exited) return Promise.reject(new Error('the sync server process exited'))
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`the sync server process did not answer "${message.type}" within ${answerTimeoutMs} ms`))
      }, answerTimeoutMs)
      pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer)
          resolve(v as T)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
      child.send({ ...message, id })
    })
  }
  let closing: Promise<void> | undefined
  const close = () => (closing ??= (async () => {
    try {
      if (!exited) await request({ type: 'close' })
    } catch {
      // answered below: a server that cannot close cleanly is killed
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exit
    clearTimeout(timer)
  })())
  let url: string
  try {
    url = await ready
  } catch (err) {
    child.kill('SIGKILL')
    await exit
    throw err
  }
  return {
    url,
    separate: true,
    addToken: (memoryId, tier, agent) => request<string>({ type: 'token', memoryId, tier, agent }),
    reset: () => request<void>({ type: 'reset' }),
    stats: () => request<ServerStats>({ type: 'stats' }),
    async roomState(room) {
      const b64 = await request<string | null>({ type: 'roomState', room })
      return b64 === null ? null : new Uint8Array(Buffer.from(b64, 'base64'))
    },
    close,
  }
}
