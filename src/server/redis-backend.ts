// Everything a sync server shares through Redis, opened together: the room store (streams and
// snapshots, fan-out between servers) and the token directory (with revocations).
import type { SyncLog } from './log'
import { RedisAccess } from './redis-access'
import { connectRedis, type RedisConnectOptions } from './redis-connection'
import { RedisRoomStore, type RedisRoomStoreOptions } from './redis-room-store'

export interface RedisOptions extends RedisConnectOptions, Omit<RedisRoomStoreOptions, 'log'> {
  /** e.g. `redis://127.0.0.1:6379` */
  url: string
}

export interface RedisBackend {
  store: RedisRoomStore
  access: RedisAccess
  /** After the store and the access source are closed: closes the connections. */
  close(): Promise<void>
}

export async function openRedisBackend(options: RedisOptions, log: SyncLog): Promise<RedisBackend> {
  const redis = await connectRedis(options.url, { log, durability: options.durability })
  try {
    const store = new RedisRoomStore(redis, { ...options, log })
    const access = await RedisAccess.open(redis, { prefix: options.prefix, log })
    return { store, access, close: () => redis.close() }
  } catch (err) {
    await redis.close()
    throw err
  }
}
