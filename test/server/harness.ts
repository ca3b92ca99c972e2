// Starts a real sync server on 127.0.0.1 (ephemeral port, temporary data directory) and real
// y-websocket clients over the `ws` package; `cleanup` closes everything it opened.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import type * as Y from 'yjs'
import type { Tier } from '../../src/core/types'
import type { LogLevel, SyncLog } from '../../src/server/log'
import { startSyncServer, type SyncServer, type SyncServerOptions } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { createMemoryDoc } from '../../src/sync/memory-doc'

export interface LogEntry {
  level: LogLevel
  event: string
  fields: Record<string, unknown>
}

export interface Harness {
  server: SyncServer
  dataDir: string
  logs: LogEntry[]
  token(memoryId: string, tier: Tier, agent?: string): { token: string; id: string }
  client(memoryId: string, token: string, doc?: Y.Doc): SyncClient
  /** Stops the server and starts a new one on the same data directory (and port). */
  restart(): Promise<void>
  cleanup(): Promise<void>
}

/** `options`: extra server options (budgets, say), kept across a restart. */
export async function startHarness(options: Partial<SyncServerOptions> = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-sync-'))
  const logs: LogEntry[] = []
  const log: SyncLog = (level, event, fields = {}) => logs.push({ level, event, fields })
  const clients: SyncClient[] = []
  let server = await startSyncServer({ ...options, dataDir, port: 0, log })
  const h: Harness = {
    get server() {
      return server
    },
    dataDir,
    logs,
    token(memoryId, tier, agent = `agent-${tier}`) {
      const { token, connection } = server.tokens.add({ memoryId, tier, agent })
      return { token, id: connection.id }
    },
    client(memoryId, token, doc = createMemoryDoc()) {
      const c = connectMemoryDoc({ serverUrl: server.url, memoryId, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
      clients.push(c)
      return c
    },
    async restart() {
      const port = server.port
      await server.close()
      server = await startSyncServer({ ...options, dataDir, port, log })
    },
    async cleanup() {
      for (const c of clients) c.destroy()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return h
}
