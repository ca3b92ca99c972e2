// A record in the middle of a room's log on disk is damaged. The records after it that build on
// it stay on disk but cannot show. The promise: the damaged log is kept beside the room for
// repair, the server log names the clients whose history is missing and from which clock, and
// once the device that wrote them reconnects, the room holds everything again.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { decodeRecords, missingHistory } from '../../src/server/room-log'
import type { LogLevel } from '../../src/server/log'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation, waitFor } from '../sync/fixture'
import { slugs } from './peer'

const ROOM = 'mem-repair'
const NOTES = Array.from({ length: 8 }, (_, i) => `note-${i}`)

let dataDir: string
let server: SyncServer | undefined
const clients: SyncClient[] = []
const logs: Array<{ level: LogLevel; event: string; fields: Record<string, unknown> }> = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy()
  await server?.close()
  server = undefined
  logs.length = 0
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(port = 0): Promise<SyncServer> {
  server = await startSyncServer({ dataDir, port, log: (level, event, fields = {}) => logs.push({ level, event, fields }) })
  return server
}

function client(token: string, doc: Y.Doc = createMemoryDoc()): SyncClient {
  const c = connectMemoryDoc({ serverUrl: server!.url, memoryId: ROOM, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  clients.push(c)
  return c
}

/** A fresh reader's view of the room, once it has synced. */
async function roomHolds(token: string, expected: string[]): Promise<void> {
  const reader = client(token)
  await reader.whenSynced()
  await waitFor(`the room to hold ${expected.length} notes`, () => slugs(reader.provider.doc).length === expected.length)
  expect(slugs(reader.provider.doc)).toEqual(expected)
  reader.destroy()
}

describe('a damaged record in the middle of a room log', () => {
  it('keeps the damaged log, names the missing history, and takes it back from the device that reconnects', { timeout: 30_000 }, async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-repair-'))
    await start()
    const writer = server!.tokens.add({ memoryId: ROOM, tier: 'read_write', agent: 'laptop' }).token
    const read = server!.tokens.add({ memoryId: ROOM, tier: 'read', agent: 'reader' }).token
    // one device writes note after note, each stored before the next: one record each, every
    // one building on the one before (the same Yjs client, clock after clock)
    const device = client(writer)
    await device.whenSynced()
    const watcher = client(read)
    await watcher.whenSynced()
    for (const slug of NOTES) {
      putObservation(device.provider.doc, observation(slug))
      await waitFor(`${slug} on the server`, () => slugs(watcher.provider.doc).includes(slug))
    }
    const port = server!.port
    // the log as it stands now, one record per note (a clean close would compact it into one);
    // every record is on disk before its note reaches another peer
    const path = join(dataDir, 'rooms', `${ROOM}.ylog`)
    const original = readFileSync(path)
    // the device goes offline, keeping its copy, and the server stops
    device.disconnect()
    await server!.close()
    server = undefined

    const records = decodeRecords(original).records
    // the record that brought note-3
    const hit = records.findIndex((r) => {
      const doc = createMemoryDoc()
      Y.applyUpdate(doc, Y.mergeUpdates(records.slice(0, records.indexOf(r) + 1)))
      return slugs(doc).includes('note-3')
    })
    expect(hit).toBeGreaterThan(0)
    expect(hit).toBeLessThan(records.length - 1)
    const offset = records.slice(0, hit).reduce((n, r) => n + 8 + r.byteLength, 0)
    const damaged = Buffer.from(original)
    const at = offset + 8 + Math.floor(records[hit]!.byteLength / 2)
    damaged[at] = damaged[at]! ^ 0xff
    writeFileSync(path, damaged)

    await start(port)
    // what the room shows: the notes before the damaged one; the later ones wait for it
    await roomHolds(read, NOTES.slice(0, 3))

    // the damaged bytes are kept beside the log, as they were
    const kept = readdirSync(join(dataDir, 'rooms')).filter((f) => f.startsWith(`${ROOM}.ylog.damaged-`))
    expect(kept).toHaveLength(1)
    expect(readFileSync(join(dataDir, 'rooms', kept[0]!)).equals(damaged)).toBe(true)
    // the log says which device's history is missing, and from where
    const missing = logs.find((l) => l.event === 'room_log_history_missing')
    expect(missing?.fields).toMatchObject({ room: ROOM, kept: kept[0] })
    const clientId = device.provider.doc.clientID
    const named = missing!.fields.missing as Array<{ client: number; from: number; to: number }>
    expect(named.map((m) => m.client)).toEqual([clientId])
    // it stops where the damaged record began: what the room holds of that client
    const held = createMemoryDoc()
    Y.applyUpdate(held, Y.mergeUpdates(records.slice(0, hit)))
    expect(named[0]!.from).toBe(Y.decodeStateVector(Y.encodeStateVector(held)).get(clientId))
    expect(named[0]!.to).toBe(Y.decodeStateVector(Y.encodeStateVector(device.provider.doc)).get(clientId))

    // the device reconnects: the server's state vector stops at that clock, so it sends the rest
    device.connect()
    await device.whenSynced()
    await roomHolds(read, NOTES)
    // and the log on disk holds it: after a restart, nothing is missing
    await server!.close()
    server = undefined
    await start(port)
    await roomHolds(read, NOTES)
    expect(existsSync(path)).toBe(true)
  })

  it('names nothing when no record was skipped, and every client whose later records wait when one was', () => {
    const a = createMemoryDoc()
    const updates: Uint8Array[] = []
    a.on('update', (u: Uint8Array) => updates.push(u))
    for (let i = 0; i < 4; i++) putObservation(a, observation(`a-${i}`))
    // another device that builds on a's last note: it waits for a's history too
    const b = createMemoryDoc()
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    const fromB: Uint8Array[] = []
    b.on('update', (u: Uint8Array) => fromB.push(u))
    putObservation(b, observation('a-3', { content: 'changed on b' }))
    expect(missingHistory([...updates, ...fromB])).toEqual([])
    const lost = missingHistory([...updates.slice(0, 1), ...updates.slice(2), ...fromB])
    expect(lost.map((m) => m.client).sort()).toEqual([a.clientID, b.clientID].sort())
    const aLost = lost.find((m) => m.client === a.clientID)!
    const held = createMemoryDoc()
    Y.applyUpdate(held, updates[0]!)
    expect(aLost.from).toBe(Y.decodeStateVector(Y.encodeStateVector(held)).get(a.clientID))
  })
})
