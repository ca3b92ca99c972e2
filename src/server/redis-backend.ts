// Everything a sync server shares through Redis, opened together: the room store (streams and
// snapshots, fan-out between servers), the token directory (with revocations) and the table of
// Yjs client-id owners.
import type { SyncLog } from './log'
import { RedisAccess } from './redis-access'
import { connectRedis, type RedisConnectOptions } from './redis-connection'
import { RedisClientOwners } from './redis-owners'
import { RedisRoomStore, type RedisRoomStoreOptions } from './redis-room-store'

export interface RedisOptions extends RedisConnectOptions, Omit<RedisRoomStoreOptions, 'log'> {
  /** e.g. `redis://127.0.0.1:6379` */
  url: string
}

export interface RedisBackend {
  store: RedisRoomStore
  access: RedisAccess
  owners: RedisClientOwners
  /** After the store and the access source are closed: closes the connections. */
  close(): Promise<void>
}

export async function openRedisBackend(options: RedisOptions, log: SyncLog): Promise<RedisBackend> {
  const redis = await connectRedis(options.url, { log, durability: options.durability })
  try {
    const store = new RedisRoomStore(redis, { ...options, log })
    const access = await RedisAccess.open(redis, { prefix: options.prefix, log })
    const owners = new RedisClientOwners(redis, { prefix: options.prefix, timeoutMs: options.persistTimeoutMs })
    return { store, access, owners, close: () => redis.close() }
  } catch (err) {
    await redis.close()
    throw err
  }
}
