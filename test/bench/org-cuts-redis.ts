// How long an organization cut takes to hold across sync servers sharing one Redis: from the
// call on server A (a member removed, by A or by another process such as the CLI; a memory
// unlisted; a memory made private by its owner's socket on A) to servers B and C both closing
// the member's live socket, which then refuse its credential. The three servers, the Redis
// connection of "another process" and the clients share this process (and its event loop).
// Goal: under 100 ms. Alone: `npx tsx test/bench/org-cuts-redis.ts 20`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import { connectRedis } from '../../src/server/redis-connection'
import { RedisOrgs } from '../../src/server/redis-orgs'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { writeVisibility } from '../../src/sync/visibility'
import { startRedis } from '../support/redis'
import { cutRow, deniedCode, type CutRow } from './access-cut'

const PATHS = ['remove member (server A)', 'remove member (another process)', 'unlist memory (server A)', 'make private (owner socket on A)'] as const

export async function benchOrgCutsRedis(rounds: number): Promise<CutRow[]> {
  const redis = await startRedis()
  const dirs: string[] = []
  const servers: SyncServer[] = []
  const clients: SyncClient[] = []
  const conn = await connectRedis(redis.url)
  try {
    for (let i = 0; i < 3; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), 'cairn-org-cuts-'))
      dirs.push(dataDir)
      servers.push(await startSyncServer({ dataDir, port: 0, redis: redis.url, log: () => undefined }))
    }
    const [a, b, c] = servers as [SyncServer, SyncServer, SyncServer]
    const other = await RedisOrgs.open(conn, { watch: false })
    const org = await a.organizations.create('bench org')
    const open = (s: SyncServer, memoryId: string, token: string): SyncClient => {
      const client = connectMemoryDoc({ serverUrl: s.url, memoryId, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 50 })
      clients.push(client)
      return client
    }
    const rows: CutRow[] = []
    for (const path of PATHS) {
      const times: number[] = []
      let allRefused = true
      const expected = path.startsWith('remove') ? CLOSE.memberRemoved : CLOSE.notVisible
      const refusedWith = path.startsWith('remove') ? CLOSE.memberRemoved : CLOSE.forbidden
      for (let i = 0; i < rounds; i++) {
        // a memory per round: unlisting and making private are one-way
        const memoryId = `bench-${path.split(' ')[0]}-${i}`
        const owner = open(a, memoryId, (await a.access.add({ memoryId, tier: 'full', agent: 'owner' })).token)
        await owner.whenSynced()
        writeVisibility(owner.provider.doc, { visibility: 'organization', orgId: org.id, name: memoryId })
        await a.organizations.accept(org.id, memoryId)
        const { credential, member } = await a.organizations.addMember(org.id, { kind: 'agent', name: `agent ${i}` })
        const live = [open(b, memoryId, credential), open(c, memoryId, credential)]
        await Promise.all(live.map((s) => s.whenSynced(10_000)))
        const closing = live.map(deniedCode)
        const t = performance.now()
        if (path === 'remove member (server A)') await a.organizations.removeMember(org.id, member.id)
        else if (path === 'remove member (another process)') await other.removeMember(org.id, member.id)
        else if (path === 'unlist memory (server A)') await a.organizations.unlist(org.id, memoryId)
        else writeVisibility(owner.provider.doc, { visibility: 'private', orgId: null, name: memoryId })
        const codes = await Promise.all(closing)
        times.push(performance.now() - t)
        const refused = await Promise.all([b, c].map((s) => deniedCode(open(s, memoryId, credential))))
        allRefused &&= codes.every((code) => code === expected) && refused.every((code) => code === refusedWith)
        owner.destroy()
      }
      rows.push(cutRow(path, times, allRefused))
    }
    return rows
  } finally {
    for (const client of clients) client.destroy()
    for (const s of servers) await s.close()
    await conn.close()
    await redis.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1]?.endsWith('org-cuts-redis.ts')) {
  benchOrgCutsRedis(Number(process.argv[2] ?? 20)).then((rows) => console.table(rows), (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
