// A new device joining a large memory gets the server's answer in pieces, applies each as it
// comes, and its status says how far it is; it ends synced with everything, like a one-piece answer.
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { WebSocket } from 'ws'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory } from '../../src/index'
import { readMemoryDoc, createMemoryDoc } from '../../src/sync/memory-doc'
import type { SyncStatus } from '../../src/sync/client'
import { putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { observation } from './fixture'

let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

describe('a first sync of a large memory', () => {
  it('arrives in pieces the device applies one by one, saying how many of how many', async () => {
    h = await startHarness()
    const owner = h.token('mem-big', 'read_write', 'owner')
    const doc = createMemoryDoc()
    // about 0.8 MB: several pieces of the server's answer
    for (let i = 0; i < 400; i++) putObservation(doc, { ...observation(`n-${i}`), content: `Note ${i} about the harbour project. `.repeat(50).trim() })
    const upload = h.client('mem-big', owner.token, doc)
    await upload.whenSynced(20_000)
    await expect.poll(async () => roomObservations(await h!.server.roomState('mem-big')), { timeout: 20_000 }).toBe(400)

    const reader = h.token('mem-big', 'read', 'new-device')
    const fresh = createMemoryDoc()
    const seen: Array<{ firstSync: SyncStatus['firstSync']; held: number }> = []
    const joining = h.client('mem-big', reader.token, fresh)
    joining.on('status', (s) => seen.push({ firstSync: s.firstSync, held: readMemoryDoc(fresh).observations.size }))
    await joining.whenSynced(20_000)

    const progress = seen.filter((s) => s.firstSync).map((s) => ({ ...s.firstSync!, held: s.held }))
    expect(progress.length).toBeGreaterThanOrEqual(2)
    const of = progress[0]!.of
    expect(of).toBeGreaterThanOrEqual(3)
    expect(progress.map((p) => p.received)).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1))
    // each piece was applied before its progress arrived: the device holds more as it goes
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.held).toBeGreaterThan(progress[i - 1]!.held)
    expect(progress.at(-1)!.held).toBeLessThan(400)
    expect(joining.status.state).toBe('online')
    expect(joining.status.firstSync).toBeNull()
    expect(readMemoryDoc(fresh).observations.size).toBe(400)
  })
})

function roomObservations(state: Uint8Array | null): number {
  const doc = createMemoryDoc()
  if (state) Y.applyUpdate(doc, state)
  return readMemoryDoc(doc).observations.size
}

describe('recall on a device still receiving its memory', () => {
  it('answers from what has arrived and says how much that is', async () => {
    h = await startHarness()
    const owner = await createMemory({ name: 'joining', indexedDB: new IDBFactory(), IDBKeyRange })
    const device = await createMemory({ name: 'joining', id: owner.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const token = h.token(owner.info.id, 'full', 'owner devices').token
      await (await owner.sync({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
      const writer = await owner.connect({ agent: 'seed', tier: 'full', localOnly: true })
      const long = 'The harbour crew met about the winter schedule and the new crane. '.repeat(12).trim()
      for (let i = 0; i < 300; i++) {
        await writer.write({ title: `Harbour note ${i}`, content: `${long} Note ${i}.`, entities: [{ name: 'Harbour Crew', type: 'team', description: 'The crew that runs the harbour' }] })
      }
      await (await owner.sync()).settled()
      await expect.poll(async () => roomObservations(await h!.server.roomState(owner.info.id)), { timeout: 30_000 }).toBe(300)

      const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
      const answers: Array<Promise<{ syncing?: { received: number; of: number } }>> = []
      const sync = await device.sync({ crossTab: false })
      const stop = sync.onView((view) => {
        // asked the moment a piece is reported, before the rest arrive
        if (view.firstSync && answers.length < 3) answers.push(agent.recall({ query: 'harbour crew' }))
      })
      sync.connect({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket })
      await sync.client!.whenSynced(30_000)
      stop()
      const early = await Promise.all(answers)
      expect(early.length).toBeGreaterThan(0)
      for (const r of early) {
        expect(r.syncing!.of).toBeGreaterThanOrEqual(2)
        expect(r.syncing!.received).toBeLessThan(r.syncing!.of)
      }
      await sync.settled()
      const later = await agent.recall({ query: 'harbour crew' })
      expect(later.syncing).toBeUndefined()
      expect(later.entities[0]?.name).toBe('Harbour Crew')
    } finally {
      await owner.close()
      await device.close()
    }
  })
})
