// The room log on disk is damaged: a flipped byte inside one record, zero bytes at the end.
// The promise: the room still loads, the damaged record is skipped with a log line, and every
// good record after it survives, on this load and the next.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { FileRoomStore } from '../../src/server/file-room-store'
import { silentLog } from '../../src/server/log'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { observation } from '../sync/fixture'
import { slugs } from './peer'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

describe('a damaged room log', () => {
  it('skips a corrupt record and trailing zeros, keeps the 8 good records after it, and loads again after a restart', async () => {
    const store = new FileRoomStore(h.dataDir, { log: silentLog })
    const offsets: number[] = []
    let size = 0
    for (let i = 0; i < 10; i++) {
      // one device per note, so no record builds on another
      const doc = createMemoryDoc()
      putObservation(doc, observation(`note-${i}`))
      const update = Y.encodeStateAsUpdate(doc)
      offsets.push(size)
      size += 8 + update.byteLength
      store.append('mem-log', update)
      await store.flush('mem-log')
    }
    await store.close()
    const path = join(h.dataDir, 'rooms', 'mem-log.ylog')
    const bytes = readFileSync(path)
    expect(bytes.byteLength).toBe(size)
    // a byte in the middle of record 2's body, then 16 zero bytes at the end
    bytes[offsets[1]! + 40] = bytes[offsets[1]! + 40]! ^ 0xff
    writeFileSync(path, Buffer.concat([bytes, Buffer.alloc(16)]))

    const reader = h.client('mem-log', h.token('mem-log', 'read', 'reader').token)
    await reader.whenSynced()
    // record 2 held note-1
    const expected = [0, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `note-${i}`)
    expect(slugs(reader.provider.doc)).toEqual(expected)
    const skipped = h.logs.filter((l) => l.event === 'room_log_record_skipped')
    expect(skipped).toHaveLength(1)
    expect(skipped[0]!.fields).toMatchObject({ room: 'mem-log', from: offsets[1] })

    reader.destroy()
    await h.restart()
    const again = h.client('mem-log', h.token('mem-log', 'read', 'again').token)
    await again.whenSynced()
    expect(slugs(again.provider.doc)).toEqual(expected)
  })
})
