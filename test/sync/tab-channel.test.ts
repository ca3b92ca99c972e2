// Tabs of one browser profile share a memory's database; the channels between them carry
// hints only. A tab's write reaches the other tab through the database, and nothing a script
// posts on either channel name (the document's or the revocations') writes, grants or revokes.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { createMemory, openMemory, type Memory } from '../../src/index'
import { engineOf } from '../../src/internals'
import { ROOTS } from '../../src/sync/layout'
import type { MemorySync } from '../../src/sync/memory-sync'
import { channelName } from '../../src/sync/tab-channel'
import { waitFor } from './fixture'

/** Polls an async check: a handle's refusal is only seen by calling it. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const start = Date.now()
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const opened: Memory[] = []
const channels: BroadcastChannel[] = []
afterEach(async () => {
  for (const c of channels.splice(0)) c.close()
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
})

async function twoTabs(): Promise<{ a: Memory; b: Memory; syncA: MemorySync; syncB: MemorySync; factory: IDBFactory }> {
  const factory = new IDBFactory()
  const a = await createMemory({ name: 'tabs', indexedDB: factory, IDBKeyRange })
  opened.push(a)
  const b = await openMemory(a.info.id, { indexedDB: factory, IDBKeyRange })
  opened.push(b)
  return { a, b, syncA: await a.sync(), syncB: await b.sync(), factory }
}

function note(title: string) {
  return { title, content: `${title}.`, entities: [{ name: 'Lena Fischer', type: 'person', description: 'Pharmacist' }] }
}

describe('the tab channels', () => {
  it('a write in one tab reaches the other through the shared database', async () => {
    const { a, syncB } = await twoTabs()
    const conn = await a.connect({ agent: 'owner', tier: 'full' })
    const { slug } = await conn.write(note('Seen in tab one'))
    await waitFor('the note in tab two', () => syncB.doc.getMap(ROOTS.observations).has(slug))
  })

  it('a script posting a grant and a write on the document channel changes nothing in a tab', async () => {
    const { a, b, syncB } = await twoTabs()
    // What the script would like a tab to take in: a full connection whose token it knows, and
    // a note. Made the way a real holder would make them, on a device of the same memory.
    const elsewhere = await createMemory({ name: 'tabs', id: a.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
    opened.push(elsewhere)
    const sync = await elsewhere.sync({ crossTab: false })
    const before = Y.encodeStateVector(sync.doc)
    const grant = await elsewhere.connect({ agent: 'intruder', tier: 'full' })
    await (await elsewhere.connect({ agent: 'writer', tier: 'full' })).write(note('Injected note'))
    await sync.settled()
    const update = Y.encodeStateAsUpdate(sync.doc, before)
    expect(sync.doc.getMap(ROOTS.access).size).toBeGreaterThan(0)

    const channel = new BroadcastChannel(channelName(a.info.id))
    channels.push(channel)
    channel.postMessage({ kind: 'update', from: 'script', update })
    channel.postMessage({ kind: 'welcome', from: 'script', to: 'anyone', update, stateVector: Y.encodeStateVector(new Y.Doc()) })
    channel.postMessage(update)
    // a real hint after them: once tab two read the row it points to, it heard every message before it
    const probe = new Y.Doc()
    probe.getMap(ROOTS.rejected).set('probe', { pair: ['alpha', 'beta'], at: '2026-03-14T09:30:00.000Z' })
    await engineOf(b).db.docUpdates.add({ update: Y.encodeStateAsUpdate(probe) })
    channel.postMessage('saved')
    await waitFor('the probe row read', () => syncB.doc.getMap(ROOTS.rejected).has('probe'))
    await syncB.settled()

    expect(syncB.doc.getMap(ROOTS.access).size).toBe(0)
    expect([...syncB.doc.getMap(ROOTS.observations).keys()]).toEqual([])
    expect(await engineOf(b).db.connections.count()).toBe(0)
    await expect(b.connectWithToken(grant.token!)).rejects.toMatchObject({ code: 'forbidden' })
  })

  it('a revoke is honoured only once the database holds it', async () => {
    const { a, b } = await twoTabs()
    const conn = await a.connect({ agent: 'agent', tier: 'read_write' })
    const inB = await b.connectWithToken(conn.token!)
    await inB.write(note('Before anything'))

    // a script names the connection as revoked: tab two looks it up, finds it live, keeps it
    const channel = new BroadcastChannel(`cairn-revocations:${a.info.id}`)
    channels.push(channel)
    channel.postMessage({ connectionId: conn.id, revokedAt: new Date().toISOString() })
    // then a connection really revoked in the database, named by the same sender after it:
    // once tab two honours that one, it has handled the first message too
    const live = await b.connect({ agent: 'probe', tier: 'read' })
    const liveInB = await b.connectWithToken(live.token!)
    await a.revoke(live.id)
    channel.postMessage({ connectionId: live.id })
    await until('the real revoke in tab two', async () => {
      try {
        await liveInB.recall({ query: 'pharmacist' })
        return false
      } catch (err) {
        return (err as { code?: string }).code === 'revoked'
      }
    })
    await expect(inB.write(note('Still allowed'))).resolves.toMatchObject({ slug: expect.any(String) })

    await a.revoke(conn.id)
    await until('the revoke in tab two', async () => {
      try {
        await inB.write(note('After the revoke'))
        return false
      } catch (err) {
        return (err as { code?: string }).code === 'revoked'
      }
    })
  })
})
