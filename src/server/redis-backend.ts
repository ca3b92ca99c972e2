// Everything a sync server shares through Redis, opened together: the room store (streams and
// snapshots, fan-out between servers), the token directory (with revocations), the table of
// Yjs client-id owners, and the organizations (with their cuts) and their memory index.
import type { SyncLog } from './log'
import { RedisAccess } from './redis-access'
import { connectRedis, type RedisConnectOptions } from './redis-connection'
import { RedisOrgMemoryIndex, RedisOrgs } from './redis-orgs'
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
  orgs: RedisOrgs
  orgMemories: RedisOrgMemoryIndex
  /** After the store and the access source are closed: closes the connections. */
  close(): Promise<void>
}

export async function openRedisBackend(options: RedisOptions, log: SyncLog): Promise<RedisBackend> {
  const redis = await connectRedis(options.url, { log, durability: options.durability })
  try {
    const store = new RedisRoomStore(redis, { ...options, log })
    const access = await RedisAccess.open(redis, { prefix: options.prefix, log })
    const owners = new RedisClientOwners(redis, { prefix: options.prefix, timeoutMs: options.persistTimeoutMs })
    const orgs = await RedisOrgs.open(redis, { prefix: options.prefix, log })
    const orgMemories = new RedisOrgMemoryIndex(redis, { prefix: options.prefix, log })
    return { store, access, owners, orgs, orgMemories, close: () => redis.close() }
  } catch (err) {
    await redis.close()
    throw err
  }
}
