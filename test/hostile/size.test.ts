// One update is judged and applied in one turn of the server's loop, so its size is bounded,
// and a connection's bytes are paced by a token bucket. The promise: an update over the limit
// is refused unread (`too_large`) and the socket goes on; a big memory's first upload still
// syncs whole, in pieces; and a connection past its byte budget is slowed (its socket not read
// for a while), not refused, so everything it sent arrives.
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { applyMemoryWrites, createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { MAX_UPDATE_BYTES } from '../../src/sync/update-split'
import { startHarness, type Harness } from '../server/harness'
import { observation, waitFor } from '../sync/fixture'
import { refusedAs, sendRaw, slugs } from './peer'

let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

function notes(doc: Y.Doc, prefix: string, count: number, chars: number): void {
  applyMemoryWrites(doc, { observations: { put: Array.from({ length: count }, (_, i) => observation(`${prefix}-${i}`, { content: 'x'.repeat(chars) })) } })
}

describe('the size of one update and the bytes of a connection', () => {
  it('refuses an update over the limit unread, keeps the socket, and takes the next one', async () => {
    h = await startHarness()
    const attacker = h.client('mem-1', h.token('mem-1', 'read_write', 'attacker').token)
    await attacker.whenSynced()
    const big = createMemoryDoc()
    notes(big, 'big', 20, 10_000)
    const update = Y.encodeStateAsUpdate(big)
    expect(update.byteLength).toBeGreaterThan(MAX_UPDATE_BYTES)
    // raw: the client itself would send it in pieces
    sendRaw(attacker, update)
    expect(await refusedAs(attacker, 1)).toBe('too_large')
    putObservation(attacker.provider.doc, observation('small-1'))
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await waitFor('the small note', () => slugs(watcher.provider.doc).includes('small-1'))
    expect(slugs(watcher.provider.doc).some((s) => s.startsWith('big-'))).toBe(false)
    expect(h.logs.filter((l) => l.event === 'update_refused').map((l) => l.fields.code)).toEqual(['too_large'])
  })

  it('a device\'s first upload of a big memory syncs whole, in pieces, with no refusal', async () => {
    h = await startHarness()
    const device = createMemoryDoc()
    for (let i = 0; i < 3; i++) notes(device, `offline-${i}`, 500, 600)
    expect(Y.encodeStateAsUpdate(device).byteLength).toBeGreaterThan(4 * MAX_UPDATE_BYTES)
    const client = h.client('mem-1', h.token('mem-1', 'read_write', 'device').token, device)
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await waitFor('the whole memory on the watcher', () => readMemoryDoc(watcher.provider.doc).observations.size === 1_500, 60_000)
    expect(client.status.refusals).toEqual([])
    // and a large transaction made while online goes in pieces too
    notes(client.provider.doc, 'online', 300, 2_000)
    await waitFor('the online batch', () => readMemoryDoc(watcher.provider.doc).observations.size === 1_800, 60_000)
    expect(client.status.refusals).toEqual([])
  })

  it('slows a connection past its byte rate instead of refusing it', { timeout: 60_000 }, async () => {
    const rate = 256 * 1024
    h = await startHarness({ budget: { bytesPerSecond: rate, burstBytes: 128 * 1024 } })
    const writer = h.client('mem-1', h.token('mem-1', 'read_write', 'writer').token)
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await Promise.all([writer.whenSynced(), watcher.whenSynced()])
    const start = Date.now()
    const before = Y.encodeStateVector(writer.provider.doc)
    notes(writer.provider.doc, 'paced', 60, 10_000)
    const bytes = Y.encodeStateAsUpdate(writer.provider.doc, before).byteLength
    await waitFor('every paced note', () => readMemoryDoc(watcher.provider.doc).observations.size === 60, 50_000)
    // past the burst, the bytes come in at the rate: a socket read at once would take a fraction of this
    expect(Date.now() - start).toBeGreaterThanOrEqual(((bytes - 128 * 1024 - MAX_UPDATE_BYTES) / rate) * 1000)
    expect(writer.status.refusals).toEqual([])
  })
})
