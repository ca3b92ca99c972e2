// How long cutting an organization member off takes to hold on the sync server: from removing
// the member (through the server, or by another process editing orgs.json, as the CLI does) or
// making the memory private on the owner's device (the change syncs to the server), to the
// server closing the member's live socket and refusing its credential from then on.
// Goal: under 100 ms. Alone: `npx tsx test/bench/org-access.ts 20`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { createMemory } from '../../src/index'
import { ORGS_FILE, OrgRegistry } from '../../src/server/org-registry'
import { startSyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { cutRow, deniedCode, type CutRow } from './access-cut'

export async function benchOrgAccess(rounds: number): Promise<CutRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-org-bench-'))
  const server = await startSyncServer({ dataDir, port: 0, log: () => undefined })
  const org = server.orgs.create('bench org')
  const owner = await createMemory({ name: 'org bench', indexedDB: new IDBFactory(), IDBKeyRange, visibility: 'organization', orgId: org.id })
  // the CLI's path: another process's registry on the same file; the server notices the change
  const cli = new OrgRegistry(join(dataDir, ORGS_FILE))
  const clients: SyncClient[] = []
  const open = (credential: string): SyncClient => {
    const c = connectMemoryDoc({ serverUrl: server.url, memoryId: owner.info.id, token: credential, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 50 })
    clients.push(c)
    return c
  }
  /** A socket that synced with the credential (the owner's visibility may still be on its way). */
  const openSynced = async (credential: string): Promise<SyncClient> => {
    const end = Date.now() + 10_000
    for (;;) {
      const c = open(credential)
      if (await c.whenSynced(2_000).then(() => true, () => false)) return c
      c.destroy()
      if (Date.now() > end) throw new Error('the member socket never synced')
    }
  }
  try {
    const ownerToken = server.tokens.add({ memoryId: owner.info.id, tier: 'full', agent: 'owner device' }).token
    await (await owner.sync({ serverUrl: server.url, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced(10_000)
    // the organization accepts the memory into its listing once; its owner decides its visibility
    server.orgs.accept(org.id, owner.info.id)
    const rows: CutRow[] = []
    const paths = ['remove member (server)', 'remove member (orgs.json by another process)', 'make private (owner device)'] as const
    for (const path of paths) {
      const times: number[] = []
      let allRefused = true
      const expected = path === 'make private (owner device)' ? CLOSE.notVisible : CLOSE.memberRemoved
      const refusedWith = path === 'make private (owner device)' ? CLOSE.forbidden : CLOSE.memberRemoved
      for (let i = 0; i < rounds; i++) {
        const { credential, member } = server.orgs.addMember(org.id, { kind: 'agent', name: `agent ${i}` })
        if (path === 'make private (owner device)') await owner.setVisibility('organization', org.id)
        const live = await openSynced(credential)
        const closing = deniedCode(live)
        const t = performance.now()
        if (path === 'remove member (server)') server.orgs.removeMember(org.id, member.id)
        else if (path === 'remove member (orgs.json by another process)') cli.removeMember(org.id, member.id)
        else await owner.setVisibility('private')
        const code = await closing
        times.push(performance.now() - t)
        const again = open(credential)
        const refused = await deniedCode(again)
        allRefused &&= code === expected && refused === refusedWith
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

if (process.argv[1]?.endsWith('org-access.ts')) {
  benchOrgAccess(Number(process.argv[2] ?? 20)).then((rows) => console.table(rows), (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
