// The Redis a test file shares: one server started before its tests and stopped after them,
// clean-ups each test registers (run after it, last first), and key prefixes that keep each
// test's keys apart. Kept apart from support/redis.ts, which benches import outside vitest.
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startRedis, type TestRedis } from './redis'

export interface RedisPerFile {
  /** Set once the file's `beforeAll` has run. */
  readonly redis: TestRedis
  readonly cleanups: Array<() => Promise<void> | void>
  /** A prefix no other test of this run uses; `tag` tells the files apart. */
  newPrefix(): string
}

export function redisPerFile(tag: string): RedisPerFile {
  let redis: TestRedis | undefined
  const cleanups: Array<() => Promise<void> | void> = []
  let prefixes = 0
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  return {
    get redis() {
      if (!redis) throw new Error('Redis is not up: read it inside a test, after beforeAll')
      return redis
    },
    cleanups,
    newPrefix: () => `${tag}${process.pid}-${prefixes++}:`,
  }
}
