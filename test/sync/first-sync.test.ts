// A new device joining a large memory gets the server's answer in pieces, applies each as it
// comes, and its status says how far it is; it ends synced with everything, like a one-piece answer.
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { WebSocket } from 'ws'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Memory } from '../../src/index'
import { engineOf } from '../../src/internals'
import type { RemoteChange } from '../../src/sync/port'
import { readMemoryDoc, createMemoryDoc } from '../../src/sync/memory-doc'
import type { SyncStatus } from '../../src/sync/client'
import type { SyncView } from '../../src/sync/memory-sync'
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

/** A memory of 300 long notes on the harbour crew, held by the server in several pieces of a first sync; its id and a token. */
async function seededRoom(harness: Harness): Promise<{ id: string; token: string }> {
  const owner = await createMemory({ name: 'joining', indexedDB: new IDBFactory(), IDBKeyRange })
  try {
    const token = harness.token(owner.info.id, 'full', 'owner devices').token
    await (await owner.sync({ serverUrl: harness.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
    const writer = await owner.connect({ agent: 'seed', tier: 'full', localOnly: true })
    const long = 'The harbour crew met about the winter schedule and the new crane. '.repeat(12).trim()
    for (let i = 0; i < 300; i++) {
      await writer.write({ title: `Harbour note ${i}`, content: `${long} Note ${i}.`, entities: [{ name: 'Harbour Crew', type: 'team', description: 'The crew that runs the harbour' }] })
    }
    await (await owner.sync()).settled()
    await expect.poll(async () => roomObservations(await harness.server.roomState(owner.info.id)), { timeout: 30_000 }).toBe(300)
    return { id: owner.info.id, token }
  } finally {
    await owner.close()
  }
}

/** Makes the memory's engine take changes from other devices through `apply` instead. */
function applyThrough(memory: Memory, apply: (change: RemoteChange, applyNow: (c: RemoteChange) => Promise<unknown>) => Promise<unknown>): void {
  const engine = engineOf(memory)
  const applyNow = engine.applyRemote.bind(engine)
  engine.applyRemote = (change) => apply(change, applyNow) as ReturnType<typeof engine.applyRemote>
}

describe('a device catching up on a memory it has received', () => {
  it('says a recall answers from part of the memory until it has applied every piece, also once the connection is synced', async () => {
    h = await startHarness()
    const { id, token } = await seededRoom(h)
    const device = await createMemory({ name: 'joining', id, indexedDB: new IDBFactory(), IDBKeyRange })
    let letGo!: () => void
    const held = new Promise<void>((resolve) => (letGo = resolve))
    try {
      const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
      const sync = await device.sync({ crossTab: false })
      // the engine is still applying when the connection is synced: here what the last piece
      // brings waits until let go
      applyThrough(device, async (change, applyNow) => {
        if (sync.client?.status.state === 'online') await held
        return applyNow(change)
      })
      sync.connect({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket })
      await sync.client!.whenSynced(30_000)
      expect(sync.client!.status.firstSync).toBeNull()
      // synced, yet not all applied: the answer is from part of the memory, and says so
      const early = await agent.recall({ query: 'harbour crew' })
      expect((await agent.listObservations({ limit: 1 })).total).toBeLessThan(300)
      expect(early.syncing!.of).toBeGreaterThanOrEqual(2)
      expect(early.syncing!.received).toBeLessThan(early.syncing!.of)
      expect(sync.view.firstSync).toEqual(early.syncing)

      letGo()
      await sync.settled()
      await expect.poll(async () => (await agent.recall({ query: 'harbour crew' })).syncing, { timeout: 10_000 }).toBeUndefined()
      const later = await agent.recall({ query: 'harbour crew' })
      expect(later.entities[0]?.name).toBe('Harbour Crew')
      expect(sync.view.firstSync).toBeNull()
      expect((await agent.listObservations({ limit: 1 })).total).toBe(300)
    } finally {
      letGo()
      await device.close()
    }
  })

  it('loses no piece when it stops between pieces: opened again, it holds every note', async () => {
    h = await startHarness()
    const { id, token } = await seededRoom(h)
    const indexedDB = new IDBFactory()
    const device = await createMemory({ name: 'joining', id, indexedDB, IDBKeyRange })
    let applied = 0
    try {
      // the engine applies the first change it is given, then stops applying (as a crash would leave it)
      applyThrough(device, async (change, applyNow) => {
        if (applied++ > 0) throw new Error('stopped')
        return applyNow(change)
      })
      const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
      const sync = await device.sync({ crossTab: false })
      sync.connect({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket })
      await sync.client!.whenSynced(30_000)
      await sync.settled().catch(() => undefined)
      const partial = (await agent.listObservations({ limit: 1 })).total
      expect(partial).toBeGreaterThan(0)
      expect(partial).toBeLessThan(300)
      expect(sync.failures.length).toBeGreaterThan(0)
    } finally {
      await device.close()
    }
    expect(applied).toBeGreaterThan(1)

    // opened again from what it saved, offline first, then with the server
    const again = await openMemory(id, { indexedDB, IDBKeyRange })
    try {
      const agent = await again.connect({ agent: 'reader', tier: 'read', localOnly: true })
      const sync = await again.sync({ crossTab: false })
      await sync.settled()
      expect((await agent.listObservations({ limit: 1 })).total).toBe(300)
      sync.connect({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket })
      await sync.client!.whenSynced(30_000)
      await sync.settled()
      expect((await agent.listObservations({ limit: 1 })).total).toBe(300)
      expect(sync.failures).toEqual([])
    } finally {
      await again.close()
    }
  })
})

describe('a device joining a memory it applies more slowly than it arrives', () => {
  it('takes the next pieces into its document only as it applies them', async () => {
    h = await startHarness()
    const owner = h.token('mem-paced', 'read_write', 'owner')
    const doc = createMemoryDoc()
    // about 2.5 MB: ten pieces or so
    const long = 'The harbour crew met about the winter schedule and the new crane. '.repeat(30).trim()
    for (let i = 0; i < 1200; i++) putObservation(doc, { ...observation(`n-${i}`), content: `${long} Note ${i}.` })
    const upload = h.client('mem-paced', owner.token, doc)
    await upload.whenSynced(20_000)
    await expect.poll(async () => roomObservations(await h!.server.roomState('mem-paced')), { timeout: 30_000 }).toBe(1200)

    const device = await createMemory({ name: 'joining', id: 'mem-paced', indexedDB: new IDBFactory(), IDBKeyRange })
    let letGo!: () => void
    const held = new Promise<void>((resolve) => (letGo = resolve))
    try {
      // the engine applies nothing until let go
      applyThrough(device, async (change, applyNow) => {
        await held
        return applyNow(change)
      })
      const sync = await device.sync({ crossTab: false })
      sync.connect({ serverUrl: h.server.url, token: h.token('mem-paced', 'read', 'device').token, WebSocketPolyfill: WebSocket })
      await expect.poll(() => readMemoryDoc(sync.doc).observations.size, { timeout: 20_000 }).toBeGreaterThan(0)
      // time for everything to arrive, were it taken regardless (the whole room takes a fraction of this)
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      const took = readMemoryDoc(sync.doc).observations.size
      expect(took).toBeLessThan(600)
      expect(sync.client!.status.state).not.toBe('online')

      letGo()
      await sync.client!.whenSynced(30_000)
      await sync.settled()
      expect(readMemoryDoc(sync.doc).observations.size).toBe(1200)
      const agent = await device.connect({ agent: 'reader', tier: 'read', localOnly: true })
      expect((await agent.listObservations({ limit: 1 })).total).toBe(1200)
    } finally {
      letGo()
      await device.close()
    }
  })
})

describe('a device asked again to sync with the server it is syncing with', () => {
  // the app asks each time a screen of the memory opens, and one opens right after a join
  it('keeps its connection: a first sync in progress goes on instead of starting over', async () => {
    h = await startHarness()
    const { id, token } = await seededRoom(h)
    const device = await createMemory({ name: 'joining', id, indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const options = { serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false }
      const sync = await device.sync(options)
      const client = sync.client!
      // what the app shows, in order: a first sync started over would show no progress for a while, then count again
      const shown: Array<SyncView['firstSync']> = []
      let askedAgain: Promise<unknown> | undefined
      const stop = sync.onView((view) => {
        shown.push(view.firstSync)
        if (view.firstSync && !askedAgain) askedAgain = device.sync(options)
      })
      await expect.poll(() => sync.view.state, { timeout: 30_000 }).toBe('online')
      await sync.settled()
      stop()
      await askedAgain
      expect(askedAgain).toBeDefined()
      expect(sync.client).toBe(client)
      const from = shown.findIndex((p) => p !== null)
      const until = shown.findLastIndex((p) => p !== null)
      const during = shown.slice(from, until + 1)
      expect(during.every((p) => p !== null && p.of === during[0]!.of)).toBe(true)
      expect(during.map((p) => p!.received)).toEqual([...during.map((p) => p!.received)].sort((a, b) => a - b))
      await sync.settled()
      expect((await (await device.connect({ agent: 'reader', tier: 'read', localOnly: true })).listObservations({ limit: 1 })).total).toBe(300)

      // another token, or a connection that went offline, is connected anew
      const other = await device.sync({ ...options, token: h.token(id, 'read', 'device').token })
      expect(other.client).not.toBe(client)
      const second = other.client!
      second.disconnect()
      expect((await device.sync(options)).client).not.toBe(second)
    } finally {
      await device.close()
    }
  })
})
