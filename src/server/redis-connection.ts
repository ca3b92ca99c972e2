// The sync server's connections to Redis (node-redis): one for commands, one for the blocking
// stream reader, one for pub/sub; all reconnect by themselves. Opening them checks that Redis
// fsyncs every write to its append-only file, which is what makes an acknowledged update durable.
import { createClient, RESP_TYPES } from '@redis/client'
import { MemoryError } from '../core/errors'
import type { SyncLog } from './log'

/** Every reply string as a Buffer: room updates are binary. */
const BUFFERS = { [RESP_TYPES.BLOB_STRING]: Buffer } as const

function makeClient(url: string) {
  return createClient({
    url,
    RESP: 2,
    socket: {
      connectTimeout: 5_000,
      // Back quickly after a Redis restart: waiting appends and readers resume as soon as it is up.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000),
    },
  }).withTypeMapping(BUFFERS)
}

export type RedisClient = ReturnType<typeof makeClient>

export interface RedisConnection {
  url: string
  command: RedisClient
  /** Blocks in XREAD; nothing else may use it. */
  reader: RedisClient
  /** In subscriber mode (revocations, organization changes). */
  subscriber: RedisClient
  close(): Promise<void>
}

export interface RedisConnectOptions {
  log?: SyncLog
  /**
   * `require` (default) refuses a Redis that does not fsync every write to its AOF, because an
   * update it acknowledged could then vanish in a crash; `trust` skips the check (a managed
   * Redis that hides CONFIG, configured as docs/sync.md says).
   */
  durability?: 'require' | 'trust'
}

/** Parses a redis:// or rediss:// URL, with a message a person can act on. */
function checkUrl(url: string): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new MemoryError('invalid_request', `"${url}" is not a Redis URL; use redis://host:6379`)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new MemoryError('invalid_request', `"${url}" is not a Redis URL; use redis://host:6379 (or rediss:// for TLS)`)
  }
}

export async function connectRedis(url: string, options: RedisConnectOptions = {}): Promise<RedisConnection> {
  checkUrl(url)
  const log = options.log ?? (() => {})
  const clients = [makeClient(url), makeClient(url), makeClient(url)] as const
  let lastLogged = 0
  for (const client of clients) {
    client.on('error', (err: Error) => {
      // A restart makes every client fail a few times a second until Redis is back; log one line a second.
      if (Date.now() - lastLogged < 1_000) return
      lastLogged = Date.now()
      log('warn', 'redis_error', { error: err.message })
    })
  }
  const close = async () => {
    await Promise.all(clients.map((c) => (c.isOpen ? c.close().catch(() => c.destroy()) : undefined)))
  }
  try {
    await Promise.all(clients.map((c) => withTimeout(c.connect(), 5_000, url)))
    if ((options.durability ?? 'require') === 'require') await checkDurability(clients[0])
  } catch (err) {
    for (const c of clients) c.destroy()
    throw err
  }
  return { url, command: clients[0], reader: clients[1], subscriber: clients[2], close }
}

async function withTimeout<T>(p: Promise<T>, ms: number, url: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MemoryError('storage_failed', `could not connect to Redis at ${url} within ${ms / 1000} s; is it running?`)), ms)
  })
  try {
    return await Promise.race([p, timeout])
  } catch (err) {
    if (err instanceof MemoryError) throw err
    throw new MemoryError('storage_failed', `could not connect to Redis at ${url}: ${(err as Error).message}`)
  } finally {
    clearTimeout(timer)
  }
}

async function checkDurability(client: RedisClient): Promise<void> {
  let reply: Buffer[]
  try {
    reply = await client.sendCommand<Buffer[]>(['CONFIG', 'GET', 'append*'])
  } catch (err) {
    throw new MemoryError('storage_failed', `cannot read Redis's persistence settings (${(err as Error).message}); allow CONFIG GET, or pass durability: 'trust' if it runs with appendonly yes and appendfsync always`)
  }
  const config = new Map<string, string>()
  for (let i = 0; i + 1 < reply.length; i += 2) config.set(reply[i]!.toString(), reply[i + 1]!.toString())
  if (config.get('appendonly') !== 'yes' || config.get('appendfsync') !== 'always') {
    throw new MemoryError('storage_failed', `Redis runs with appendonly ${config.get('appendonly') ?? '?'} and appendfsync ${config.get('appendfsync') ?? '?'}: an update it acknowledged could be lost in a crash. Start it with --appendonly yes --appendfsync always`, {
      appendonly: config.get('appendonly'),
      appendfsync: config.get('appendfsync'),
    })
  }
}
