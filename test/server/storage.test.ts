// The embedded room log and the token registry, on a real temporary directory.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { decodeRecords, FileRoomStore, type LogWork } from '../../src/server/file-room-store'
import { compactLog, encodeRecord } from '../../src/server/room-log'
import { hashToken, TokenRegistry } from '../../src/server/token-registry'
import { ROOTS } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation } from '../sync/fixture'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-store-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** A document that records each of its updates into the store, as the server does. */
function recordedDoc(store: FileRoomStore, room: string): Y.Doc {
  const doc = createMemoryDoc()
  doc.on('update', (u: Uint8Array) => store.append(room, u))
  return doc
}

/** Log work whose merge waits until `release`: a compaction caught in the middle. */
function heldMerge(): { offload: LogWork; merging: () => boolean; release: () => void } {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  let merging = false
  const offload: LogWork = {
    decodeLog: async (bytes) => decodeRecords(bytes),
    merge: async (updates) => Y.mergeUpdates(updates),
    mergeRecord: async (updates) => encodeRecord(Y.mergeUpdates(updates)),
    compactLog: async (bytes) => {
      merging = true
      await held
      return compactLog(bytes)
    },
  }
  return { offload, merging: () => merging, release }
}

describe('FileRoomStore', () => {
  it('loads what was appended, after a restart', async () => {
    const store = new FileRoomStore(dir)
    const doc = recordedDoc(store, 'room-1')
    for (let i = 0; i < 10; i++) putObservation(doc, observation(`o-${i}`))
    await store.close()
    const again = new FileRoomStore(dir)
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await again.load('room-1'))!)
    expect(readMemoryDoc(loaded).observations.size).toBe(10)
    expect(await again.load('room-2')).toBeNull()
  })

  it('cuts off a torn last record and keeps the rest', async () => {
    const store = new FileRoomStore(dir)
    const doc = recordedDoc(store, 'room-1')
    putObservation(doc, observation('whole-1'))
    putObservation(doc, observation('whole-2'))
    await store.close()
    const file = join(dir, 'rooms', 'room-1.ylog')
    const good = statSync(file).size
    appendFileSync(file, Buffer.from([0, 0, 1, 0, 9, 9, 9, 9, 1, 2, 3]))
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await new FileRoomStore(dir).load('room-1'))!)
    expect([...readMemoryDoc(loaded).observations.keys()].sort()).toEqual(['whole-1', 'whole-2'])
    expect(statSync(file).size).toBe(good)
    // the bytes cut off are kept beside the log: a damaged last record is not a torn write
    const kept = readdirSync(join(dir, 'rooms')).filter((f) => f.startsWith('room-1.ylog.damaged-'))
    expect(kept).toHaveLength(1)
    expect([...readFileSync(join(dir, 'rooms', kept[0]!))]).toEqual([0, 0, 1, 0, 9, 9, 9, 9, 1, 2, 3])
  })

  it('compacts the log into one record without losing anything', async () => {
    const store = new FileRoomStore(dir, { compactAfterRecords: 25 })
    const doc = recordedDoc(store, 'room-1')
    for (let i = 0; i < 60; i++) putObservation(doc, observation(`o-${i % 20}`, { content: `version ${i}` }))
    await store.flush()
    await store.compact('room-1')
    const bytes = readFileSync(join(dir, 'rooms', 'room-1.ylog'))
    expect(bytes.readUInt32BE(0) + 8).toBe(bytes.byteLength)
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await store.load('room-1'))!)
    expect(loaded.getMap(ROOTS.observations).toJSON()).toEqual(doc.getMap(ROOTS.observations).toJSON())
    await store.close()
  })

  it('keeps taking appends while a compaction merges, and loses none of them in the swap', async () => {
    // the merge is held until the test lets it go: appends made meanwhile must not wait for it
    const { offload, merging, release } = heldMerge()
    const store = new FileRoomStore(dir, { compactAfterRecords: 10, offload })
    const doc = recordedDoc(store, 'room-1')
    for (let i = 0; i < 10; i++) putObservation(doc, observation(`before-${i}`))
    await store.flush('room-1')
    await expect.poll(merging).toBe(true)
    // while the merge is held: these reach the disk, durably, before it ends
    const hang = new Promise<string>((resolve) => setTimeout(() => resolve('waited for the merge'), 10_000))
    for (let i = 0; i < 5; i++) {
      putObservation(doc, observation(`during-${i}`))
      expect(await Promise.race([store.flush('room-1').then(() => 'durable'), hang])).toBe('durable')
    }
    release()
    await store.settled()
    // the merged record, then the five appended while it merged
    expect(decodeRecords(readFileSync(join(dir, 'rooms', 'room-1.ylog'))).records).toHaveLength(6)
    expect(readdirSync(join(dir, 'rooms')).filter((f) => f.endsWith('.tmp'))).toEqual([])
    await store.close()
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await new FileRoomStore(dir).load('room-1'))!)
    expect([...readMemoryDoc(loaded).observations.keys()].sort()).toEqual([...doc.getMap(ROOTS.observations).keys()].sort())
    expect(readMemoryDoc(loaded).observations.size).toBe(15)
  })

  it('drops a compaction whose log was deleted while it merged', async () => {
    const { offload, merging, release } = heldMerge()
    const store = new FileRoomStore(dir, { compactAfterRecords: 10, offload })
    const doc = recordedDoc(store, 'room-1')
    for (let i = 0; i < 10; i++) putObservation(doc, observation(`o-${i}`))
    await store.flush('room-1')
    await expect.poll(merging).toBe(true)
    await store.remove('room-1')
    release()
    await store.settled()
    // the memory was deleted: its history does not come back from the merge
    expect(await store.load('room-1')).toBeNull()
    expect(readdirSync(join(dir, 'rooms'))).toEqual([])
    await store.close()
  })

  it('rejects room names that could escape the data directory', async () => {
    const store = new FileRoomStore(dir)
    await expect(store.load('../etc')).rejects.toThrow(/room name/)
    expect(() => store.append('.hidden', new Uint8Array([0, 0]))).toThrow(/room name/)
  })
})

/** `n` updates of one writer, each an observation, in the order they were made. */
function updates(n: number, prefix: string): Uint8Array[] {
  const doc = createMemoryDoc()
  const out: Uint8Array[] = []
  doc.on('update', (u: Uint8Array) => out.push(u))
  for (let i = 0; i < n; i++) putObservation(doc, observation(`${prefix}-${i}`))
  return out
}

/** The records of a room's log as a process that starts now reads them. */
function recordsOnDisk(room: string): Uint8Array[] {
  return decodeRecords(readFileSync(join(dir, 'rooms', `${room}.ylog`))).records
}

describe('FileRoomStore, its logs kept open between batches', () => {
  it('holds every acknowledged batch, in order, for a process that starts while this one still runs (a kill between batches)', async () => {
    const store = new FileRoomStore(dir)
    const made = updates(12, 'o')
    // three batches, each acknowledged before the next is made; the store is never closed
    for (let b = 0; b < 3; b++) await Promise.all(made.slice(b * 4, b * 4 + 4).map((u) => store.persist('room-1', u)))
    expect(store.openLogCount).toBe(1)
    expect(recordsOnDisk('room-1')).toEqual(made)
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await new FileRoomStore(dir).load('room-1'))!)
    expect(readMemoryDoc(loaded).observations.size).toBe(12)
    await store.close()
    expect(store.openLogCount).toBe(0)
  })

  it('writes after a compaction into the new log, never into the one it replaced', async () => {
    const store = new FileRoomStore(dir, { compactAfterRecords: 10 })
    const made = updates(25, 'o')
    for (const u of made.slice(0, 10)) await store.persist('room-1', u)
    // the compaction beside the appends swaps the log while its handle was open
    await store.settled()
    expect(recordsOnDisk('room-1')).toHaveLength(1)
    for (const u of made.slice(10, 15)) await store.persist('room-1', u)
    // an explicit compaction swaps it again
    await store.compact('room-1')
    for (const u of made.slice(15)) await store.persist('room-1', u)
    const records = recordsOnDisk('room-1')
    expect(records.slice(1)).toEqual(made.slice(15))
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, Y.mergeUpdates(records))
    expect(readMemoryDoc(loaded).observations.size).toBe(25)
    await store.close()
  })

  it('starts a new log after a room is removed, and after a load repaired a torn tail', async () => {
    const store = new FileRoomStore(dir)
    const [first, second, third] = updates(3, 'o')
    await store.persist('room-1', first!)
    await store.remove('room-1')
    await store.persist('room-1', second!)
    expect(recordsOnDisk('room-1')).toEqual([second])
    // a torn record at the end, as a crash in another process would leave it: the load cuts it off
    appendFileSync(join(dir, 'rooms', 'room-1.ylog'), Buffer.from([0, 0, 1, 0, 9]))
    await store.load('room-1')
    await store.persist('room-1', third!)
    expect(recordsOnDisk('room-1')).toEqual([second, third])
    await store.close()
  })

  it('refuses to acknowledge a batch whose write failed, and writes the next one through a log opened again', async () => {
    const store = new FileRoomStore(dir, { log: () => {} })
    const [first, second, third] = updates(3, 'o')
    await store.persist('room-1', first!)
    // the kept handle goes bad under the store (as a file system error would make it)
    const held = (store as unknown as { rooms: Map<string, { handle: { close(): Promise<void> } | null }> }).rooms.get('room-1')!.handle!
    await held.close()
    await expect(store.persist('room-1', second!)).rejects.toMatchObject({ code: 'storage_failed' })
    await expect(store.flush('room-1')).rejects.toMatchObject({ code: 'storage_failed' })
    await store.persist('room-1', third!)
    await store.flush('room-1')
    expect(recordsOnDisk('room-1')).toEqual([first, third])
    await store.close()
  })

  it('keeps at most maxOpenLogs open, closing the least recently written, and loses no room\'s writes or order', async () => {
    const store = new FileRoomStore(dir, { maxOpenLogs: 2 })
    const rooms = ['room-a', 'room-b', 'room-c', 'room-d', 'room-e']
    const made = new Map(rooms.map((r) => [r, updates(6, r)]))
    for (let i = 0; i < 6; i++) {
      // every room written in turn: each write past the second opens a log and closes another
      await Promise.all(rooms.map((r) => store.persist(r, made.get(r)![i]!)))
      await store.flush()
      expect(store.openLogCount).toBeLessThanOrEqual(2)
    }
    for (const r of rooms) expect(recordsOnDisk(r)).toEqual(made.get(r))
    await store.close()
    expect(store.openLogCount).toBe(0)
  })

  it('compacts once the log has doubled since its last compaction, not every few records', async () => {
    const store = new FileRoomStore(dir, { compactAfterRecords: 10 })
    const doc = createMemoryDoc()
    const made: Uint8Array[] = []
    doc.on('update', (u: Uint8Array) => made.push(u))
    // a large first entry: the compacted log is large beside the small records that follow
    putObservation(doc, observation('large', { content: 'x'.repeat(6_000) }))
    for (let i = 0; i < 60; i++) putObservation(doc, observation(`o-${i}`))
    const size = () => statSync(join(dir, 'rooms', 'room-1.ylog')).size
    for (const u of made.slice(0, 10)) await store.persist('room-1', u)
    await store.settled()
    expect(recordsOnDisk('room-1')).toHaveLength(1)
    const compacted = size()
    let i = 10
    // ten records and more, but until the log has doubled it is not compacted again
    while (size() + made[i]!.byteLength + 8 < 2 * compacted) {
      await store.persist('room-1', made[i++]!)
      await store.settled()
      expect(recordsOnDisk('room-1')).toHaveLength(i - 9)
    }
    expect(i).toBeGreaterThan(20)
    await store.persist('room-1', made[i++]!)
    await store.settled()
    expect(recordsOnDisk('room-1')).toHaveLength(1)
    const loaded = createMemoryDoc()
    Y.applyUpdate(loaded, (await new FileRoomStore(dir).load('room-1'))!)
    expect(readMemoryDoc(loaded).observations.size).toBe(i)
    await store.close()
  })
})

describe('TokenRegistry', () => {
  it('stores only hashes, verifies tokens and shares revokes through the file', () => {
    const file = join(dir, 'tokens.json')
    const registry = new TokenRegistry(file)
    const { token, connection } = registry.add({ memoryId: 'mem-1', agent: 'notes', tier: 'read' })
    const onDisk = readFileSync(file, 'utf8')
    expect(onDisk).not.toContain(token)
    expect(onDisk).toContain(hashToken(token))
    expect(registry.verify(token)?.id).toBe(connection.id)
    expect(registry.verify(`${token}x`)).toBeNull()
    expect(registry.verify('')).toBeNull()

    const other = new TokenRegistry(file)
    const revokedIds: string[] = []
    registry.onRevoked((c) => revokedIds.push(c.id))
    other.revoke(connection.id)
    registry.reload()
    expect(revokedIds).toEqual([connection.id])
    expect(registry.verify(token)?.revokedAt).not.toBeNull()
    expect(() => registry.add({ memoryId: '../x', agent: 'a' })).toThrow(/memory id/)
    expect(() => registry.revoke('conn_missing')).toThrow(/no connection/)
  })
})
