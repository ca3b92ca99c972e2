// How long a revoke takes to hold on the sync server: from the call on the owner's device (a
// revoke written into the memory's connections, which syncs to the server) or on the server's
// own token file (the CLI's path), to the server closing that connection's live socket and
// refusing it from then on. Goal: under 100 ms. Alone: `npx tsx test/bench/revoke.ts 20`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { createMemory } from '../../src/index'
import { startSyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { cutRow, deniedCode, type CutRow } from './access-cut'

export async function benchRevoke(rounds: number): Promise<CutRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-revoke-bench-'))
  const server = await startSyncServer({ dataDir, port: 0, log: () => undefined })
  const owner = await createMemory({ name: 'revoke bench', indexedDB: new IDBFactory(), IDBKeyRange })
  const clients: SyncClient[] = []
  const open = async (token: string): Promise<SyncClient> => {
    const c = connectMemoryDoc({ serverUrl: server.url, memoryId: owner.info.id, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
    clients.push(c)
    await c.whenSynced(10_000)
    return c
  }
  try {
    const ownerToken = server.tokens.add({ memoryId: owner.info.id, tier: 'full', agent: 'owner device' }).token
    await (await owner.sync({ serverUrl: server.url, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced(10_000)
    const rows: CutRow[] = []
    for (const path of ['owner device (memory connection)', 'server token file (CLI)'] as const) {
      const times: number[] = []
      let allRefused = true
      for (let i = 0; i < rounds; i++) {
        let token: string
        let revoke: () => Promise<unknown>
        if (path === 'owner device (memory connection)') {
          const made = await owner.connect({ agent: `agent ${i}`, tier: 'read_write' })
          token = made.token!
          revoke = () => owner.revoke(made.id)
          // the connection must reach the server before its token can open a socket
          const end = Date.now() + 10_000
          for (;;) {
            const probe = connectMemoryDoc({ serverUrl: server.url, memoryId: owner.info.id, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false })
            const ok = await probe.whenSynced(2_000).then(() => true, () => false)
            probe.destroy()
            if (ok) break
            if (Date.now() > end) throw new Error('the connection never reached the server')
          }
        } else {
          const made = server.tokens.add({ memoryId: owner.info.id, tier: 'read_write', agent: `agent ${i}` })
          token = made.token
          revoke = async () => server.tokens.revoke(made.connection.id)
        }
        const live = await open(token)
        const closing = deniedCode(live)
        const t = performance.now()
        await revoke()
        const code = await closing
        times.push(performance.now() - t)
        const again = connectMemoryDoc({ serverUrl: server.url, memoryId: owner.info.id, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false })
        clients.push(again)
        const refused = await deniedCode(again)
        allRefused &&= code === CLOSE.revoked && refused === CLOSE.revoked
      }
      rows.push(cutRow(path, times, allRefused))
    }
    return rows
  } finally {
    for (const c of clients) c.destroy()
    await owner.close()
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1]?.endsWith('revoke.ts')) {
  benchRevoke(Number(process.argv[2] ?? 20)).then((rows) => console.table(rows), (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
