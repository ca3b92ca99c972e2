// A throwaway Redis for tests and benchmarks: Debian's redis-server on 127.0.0.1, a free port,
// its own data directory, AOF with fsync on every write; killed (SIGKILL) and restarted on the
// same port and directory on demand, removed at `stop`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server'

export interface TestRedis {
  url: string
  port: number
  dir: string
  /** Kills Redis without letting it save anything: only what its AOF holds survives. */
  kill(): Promise<void>
  /** Starts it again on the same port and directory. */
  start(): Promise<void>
  /** Another Redis on a copy of this one's files as they are now (after `kill`: what survived). */
  copy(): Promise<TestRedis>
  stop(): Promise<void>
}

export function redisAvailable(): boolean {
  return existsSync(REDIS_SERVER)
}

/** Installs Debian's redis-server when it is missing (as .ci/run does), or says how. */
function ensureRedisServer(): void {
  if (redisAvailable()) return
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo', '-n']
  const apt = (args: string[]) => execFileSync(asRoot[0] ?? 'apt-get', [...asRoot.slice(1), ...(asRoot.length ? ['apt-get'] : []), ...args], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 300_000 })
  try {
    apt(['update', '-qq'])
    apt(['install', '-y', '-qq', '--no-install-recommends', 'redis-server'])
  } catch (err) {
    throw new Error(`${REDIS_SERVER} is missing and could not be installed (${(err as Error).message}); run: apt-get install redis-server`)
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Resolves once Redis answers PING on the port. */
async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('error', () => resolve(false))
      socket.once('data', (d) => {
        socket.destroy()
        resolve(d.toString().startsWith('+PONG'))
      })
      socket.once('connect', () => socket.write('PING\r\n'))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`redis-server did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`)
}

export async function startRedis(options: { durable?: boolean; from?: string } = {}): Promise<TestRedis> {
  ensureRedisServer()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'cairn-redis-'))
  if (options.from) cpSync(options.from, dir, { recursive: true })
  const durable = options.durable ?? true
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--protected-mode', 'yes',
      ...(durable ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'])]
    const c = spawn(REDIS_SERVER, args, { stdio: 'ignore' })
    child = c
    exited = new Promise((resolve) => c.once('exit', () => resolve()))
    await waitForPing(port, 5_000)
  }
  const kill = async () => {
    child?.kill('SIGKILL')
    await exited
    child = null
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill,
    start,
    copy: () => startRedis({ durable, from: dir }),
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
