// Raw sockets holding a valid full token throw malformed frames at a real sync server: random
// bytes, cut-off sync messages, a multi-megabyte frame, text frames, and updates carrying
// observations that fail validation. The server must stay up, a well-behaved client must still
// sync, and no invalid entry may reach a memory that syncs from the room.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import * as encoding from 'lib0/encoding'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import { createMemory, type Memory } from '../../src/index'
import { ROOTS } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation } from '../sync/fixture'
import { startHarness, type Harness } from '../server/harness'
import { engineOf } from '../../src/internals'

let h: Harness | undefined
const opened: Memory[] = []
// the websocket server library reports undecodable frames on console.error; keep them to check
let printed: string[] = []
beforeEach(() => {
  printed = []
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(' ')))
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
  await h?.cleanup()
  h = undefined
})

/** Deterministic bytes, so a failure reproduces. */
function prng(seed: number): () => number {
  let x = seed >>> 0
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

function syncFrame(step: number, payload: Uint8Array): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  encoding.writeVarUint(e, step)
  encoding.writeVarUint8Array(e, payload)
  return encoding.toUint8Array(e)
}

async function openRaw(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url)
  ws.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('close', () => reject(new Error('socket closed before opening')))
  })
  return ws
}

/** Sends frames one by one, stopping quietly if the server hangs up (that is an allowed answer). */
async function blast(ws: WebSocket, frames: Array<Uint8Array | string>): Promise<number> {
  let sent = 0
  for (const f of frames) {
    if (ws.readyState !== ws.OPEN) break
    await new Promise<void>((resolve) => ws.send(f, () => resolve()))
    sent++
  }
  await new Promise((r) => setTimeout(r, 50))
  ws.close()
  return sent
}

async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('sync server under malformed frames', () => {
  it('stays up and keeps serving a well-behaved client after garbage from a full token', async () => {
    h = await startHarness()
    const room = 'fuzz-room'
    const { token } = h.token(room, 'full')
    const url = `${h.server.url}/${room}?token=${encodeURIComponent(token)}`
    const rand = prng(20261203)
    const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256))

    // a real change to cut into pieces: every prefix is a truncated but plausible message
    const source = createMemoryDoc()
    putObservation(source, observation('cut-1'))
    const update = Y.encodeStateAsUpdate(source)
    const valid = [syncFrame(syncProtocol.messageYjsUpdate, update), syncFrame(syncProtocol.messageYjsSyncStep2, update), syncFrame(syncProtocol.messageYjsSyncStep1, Y.encodeStateVector(source))]
    const truncated = valid.flatMap((f) => Array.from({ length: 12 }, () => f.slice(0, 1 + Math.floor(rand() * (f.length - 1)))))
    // a valid sync header claiming far more payload than follows
    const lying = Uint8Array.from([0, 2, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3])
    const random = Array.from({ length: 60 }, () => bytes(1 + Math.floor(rand() * 300)))
    const typed = Array.from({ length: 20 }, (_, i) => Uint8Array.from([i % 4, ...bytes(20)]))
    const huge = bytes(4 * 1024 * 1024)

    const batches: Array<Array<Uint8Array | string>> = [random, truncated, [lying], typed, [huge], ['not binary', '{"type":"sync"}', ''], [new Uint8Array(0)]]
    let frames = 0
    for (const batch of batches) frames += await blast(await openRaw(url), batch)
    console.info(`sync fuzz: ${frames} malformed frames sent over ${batches.length} sockets`)
    expect(frames).toBeGreaterThan(100)

    // the server is still up, and a proper client syncs a change through it
    const writer = h.client(room, token)
    const reader = h.client(room, token)
    await Promise.all([writer.whenSynced(5_000), reader.whenSynced(5_000)])
    putObservation(writer.provider.doc, observation('after-fuzz-1'))
    await until(() => readMemoryDoc(reader.provider.doc).observations.has('after-fuzz-1'))
    const seen = readMemoryDoc(reader.provider.doc)
    expect(seen.invalid).toEqual([])
    // only whole, valid changes made it in: the truncated frames of cut-1 may have landed whole or not at all
    expect([...seen.observations.keys()].filter((k) => k !== 'cut-1')).toEqual(['after-fuzz-1'])
    // whatever got printed or logged about the garbage, the token is not in it
    expect(printed.join('\n')).not.toContain(token)
    expect(JSON.stringify(h.logs)).not.toContain(token)
  }, 30_000)

  it('keeps observations that fail validation out of the room (read_write and full) and out of a syncing memory', async () => {
    h = await startHarness()
    const factory = new IDBFactory()
    const memory = await createMemory({ name: 'fuzzed', indexedDB: factory, IDBKeyRange })
    opened.push(memory)
    const room = memory.info.id
    const full = h.token(room, 'full').token
    const rw = h.token(room, 'read_write').token

    // valid-looking updates whose observation values break the schema in different ways
    const bad = [
      { slug: 'bad-1' },
      { ...observation('bad-2'), entities: 'not a list' },
      { ...observation('bad-3'), observedAt: 'not a date' },
      { ...observation('bad-4'), confidence: Number.NaN },
      { ...observation('bad-5'), title: '' },
      { ...observation('bad-6'), entities: [{ name: '', description: '' }] },
    ]
    const badUpdate = () => {
      const d = createMemoryDoc()
      for (const b of bad) d.getMap(ROOTS.observations).set(b.slug, b)
      return Y.encodeStateAsUpdate(d)
    }
    await blast(await openRaw(`${h.server.url}/${room}?token=${encodeURIComponent(rw)}`), [syncFrame(syncProtocol.messageYjsUpdate, badUpdate())])
    const probe = h.client(room, full)
    await probe.whenSynced(5_000)
    await new Promise((r) => setTimeout(r, 100))
    expect([...probe.provider.doc.getMap(ROOTS.observations).keys()]).toEqual([])

    // a full connection may edit and delete, but not write invalid entries either
    await blast(await openRaw(`${h.server.url}/${room}?token=${encodeURIComponent(full)}`), [syncFrame(syncProtocol.messageYjsUpdate, badUpdate())])
    await new Promise((r) => setTimeout(r, 100))
    expect([...probe.provider.doc.getMap(ROOTS.observations).keys()]).toEqual([])
    putObservation(probe.provider.doc, observation('good-1'))

    const sync = await memory.sync({ serverUrl: h.server.url, token: full, WebSocketPolyfill: WebSocket, crossTab: false })
    await until(async () => {
      await sync.settled()
      return engineOf(memory).committedGraph.getObservation('good-1') !== undefined
    })
    // and should bad entries reach the document another way (a peer that skips the server), the memory refuses them itself
    Y.applyUpdate(sync.doc, badUpdate())
    await sync.settled()
    const stored = (await engineOf(memory).db.observations.toArray()).map((o) => o.slug)
    expect(stored).toEqual(['good-1'])
    for (const b of bad) expect(engineOf(memory).committedGraph.getObservation(b.slug)).toBeUndefined()
  }, 30_000)
})
