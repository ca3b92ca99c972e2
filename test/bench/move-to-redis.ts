// How long `move-to-redis` takes for a data directory of a given size: ROOMS rooms of NOTES
// notes each (written through the file room store, one record per note), a token and an owner
// binding per room, one organization; the first run (everything moves) and a second run
// (everything is skipped). Alone: `npx tsx test/bench/move-to-redis.ts 200 50`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClientOwners } from '../../src/server/client-owners'
import { FileRoomStore } from '../../src/server/file-room-store'
import { silentLog } from '../../src/server/log'
import { moveToRedis } from '../../src/server/move-to-redis'
import { ORGS_FILE, OrgRegistry } from '../../src/server/org-registry'
import { TOKENS_FILE, TokenRegistry } from '../../src/server/token-registry'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { startRedis } from '../support/redis'
import { observation } from '../sync/fixture'

async function writeDataDir(dataDir: string, rooms: number, notes: number): Promise<number> {
  const store = new FileRoomStore(dataDir, { log: silentLog, compactAfterRecords: Number.MAX_SAFE_INTEGER })
  const tokens = new TokenRegistry(join(dataDir, TOKENS_FILE))
  const owners = new ClientOwners(dataDir)
  let bytes = 0
  for (let r = 0; r < rooms; r++) {
    const room = `mem-${r}`
    const { connection } = tokens.add({ memoryId: room, agent: `agent ${r}` })
    const doc = createMemoryDoc()
    doc.on('update', (u: Uint8Array) => {
      bytes += u.byteLength
      store.append(room, u)
    })
    for (let n = 0; n < notes; n++) putObservation(doc, observation(`${room}-note-${n}`))
    await owners.bind(room, [doc.clientID], connection.id)
  }
  await store.close()
  const orgs = new OrgRegistry(join(dataDir, ORGS_FILE))
  const org = orgs.create('Acme')
  for (let m = 0; m < 20; m++) orgs.addMember(org.id, { kind: 'agent', name: `member ${m}` })
  return bytes
}

async function main(): Promise<void> {
  const rooms = Number(process.argv[2] ?? 200)
  const notes = Number(process.argv[3] ?? 50)
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-move-bench-'))
  const redis = await startRedis()
  try {
    const bytes = await writeDataDir(dataDir, rooms, notes)
    for (const run of ['first run (everything moves)', 'second run (everything skipped)']) {
      const started = performance.now()
      const report = await moveToRedis({ dataDir, redis: redis.url })
      const ms = performance.now() - started
      console.log(`${run}: ${ms.toFixed(0)} ms for ${rooms} rooms x ${notes} notes (${(bytes / 1e6).toFixed(1)} MB of updates); rooms moved ${report.rooms.moved.length}, skipped ${report.rooms.skipped.length}; tokens moved ${report.tokens.moved.length}, skipped ${report.tokens.skipped.length}`)
    }
  } finally {
    await redis.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

void main()
