// The organization matrix (organization-matrix.ts) on three sync servers sharing one Redis (a
// throwaway redis-server on 127.0.0.1): organizations, members and the listing live in Redis.
// The owner syncs and the administrator acts on server A, the owner's other device and MCP
// replica use server B, and members read through server C; so a member added on A reads
// through C, and a member removed (or a memory unlisted, or made private) on A is cut on C.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import { silentLog } from '../../src/server/log'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { startRedis } from '../support/redis'
import { organizationMatrix } from './organization-matrix'

organizationMatrix(async () => {
  const redis = await startRedis()
  const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'cairn-org-redis-')))
  const start = (dataDir: string, port = 0) => startSyncServer({ dataDir, port, redis: { url: redis.url, prefix: 'orgmatrix:' }, log: silentLog })
  let servers: SyncServer[] = []
  for (const dir of dirs) servers.push(await start(dir))
  const [a, , c] = servers as [SyncServer, SyncServer, SyncServer]
  const clients: SyncClient[] = []
  const admin = () => servers[0]!.organizations
  return {
    ownerUrl: a.url,
    replicaUrl: servers[1]!.url,
    memberUrl: c.url,
    orgs: {
      create: (name) => admin().create(name),
      addMember: (orgId, input) => admin().addMember(orgId, input),
      removeMember: (orgId, memberId) => admin().removeMember(orgId, memberId),
      list: () => admin().list(),
      accept: (orgId, memoryId) => admin().accept(orgId, memoryId),
      unlist: (orgId, memoryId) => admin().unlist(orgId, memoryId),
      memories: (orgId) => admin().memories(orgId),
    },
    token: async (memoryId, tier, agent = `agent-${tier}`) => {
      const { token, connection } = await servers[0]!.access.add({ memoryId, tier, agent })
      return { token, id: connection.id }
    },
    client: (memoryId, token, via = 'member') => {
      const client = connectMemoryDoc({ serverUrl: servers[via === 'member' ? 2 : 1]!.url, memoryId, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
      clients.push(client)
      return client
    },
    roomState: (memoryId) => servers[0]!.roomState(memoryId),
    async restart() {
      const ports = servers.map((s) => s.port)
      await Promise.all(servers.map((s) => s.close()))
      servers = []
      for (const [i, dir] of dirs.entries()) servers.push(await start(dir, ports[i]))
    },
    async cleanup() {
      for (const client of clients) client.destroy()
      await Promise.all(servers.map((s) => s.close()))
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
      await redis.stop()
    },
  }
})
