// A connection is revoked in one open instance of a memory (a tab, a worker) while another
// instance holds a handle of it. The promise: the revoke holds in every instance at once.
import { afterEach, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Connection, type Memory } from '../../src/index'
import { MemoryDB } from '../../src/store/db'
import { saveConnections } from '../../src/store/commit'
import { ada } from '../engine/fixture'

const opened: Memory[] = []
afterEach(async () => {
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
})

const note = (title: string) => ({ title, content: `${title}.`, entities: [ada] })

describe('revocation across instances of a memory', () => {
  it('stops a handle open in another instance and refuses its token there; a connection made elsewhere is known there', async () => {
    const indexedDB = new IDBFactory()
    const first = await createMemory({ name: 'shared', indexedDB, IDBKeyRange })
    opened.push(first)
    const second = await openMemory(first.info.id, { indexedDB, IDBKeyRange })
    opened.push(second)

    // made in the first instance after the second opened
    const conn = await first.connect({ agent: 'extension', tier: 'read_write' })
    const elsewhere = await second.connectWithToken(conn.token!)
    await elsewhere.write(note('Before the revoke'))

    await first.revoke(conn.id)
    await new Promise((r) => setTimeout(r, 20))
    await expect(elsewhere.write(note('After the revoke'))).rejects.toMatchObject({ code: 'revoked' })
    await expect(elsewhere.recall({ query: 'Ada' })).rejects.toMatchObject({ code: 'revoked' })
    await expect(second.connectWithToken(conn.token!)).rejects.toMatchObject({ code: 'forbidden' })
  })

  // No wait at all between the revoke resolving in one instance and the call in the other:
  // each change reads the stored connection in its own transaction, each read alongside.
  async function revokedElsewhere(tier: 'read_write' | 'full') {
    const indexedDB = new IDBFactory()
    const first = await createMemory({ name: 'shared', indexedDB, IDBKeyRange })
    opened.push(first)
    const second = await openMemory(first.info.id, { indexedDB, IDBKeyRange })
    opened.push(second)
    const conn = await first.connect({ agent: 'extension', tier })
    const elsewhere = await second.connectWithToken(conn.token!)
    const { slug } = await elsewhere.write(note('Before the revoke'))
    await first.revoke(conn.id)
    // what storage holds, as an instance opened afterwards reads it
    const stored = async () => {
      const later = await openMemory(first.info.id, { indexedDB, IDBKeyRange })
      opened.push(later)
      return later.connect({ agent: 'owner-check', tier: 'full' })
    }
    return { elsewhere, stored, slug }
  }

  it('refuses a write in another instance the moment revoke() resolves, and stores nothing of it', async () => {
    const { elsewhere, stored } = await revokedElsewhere('read_write')
    await expect(elsewhere.write(note('Right after the revoke'))).rejects.toMatchObject({ code: 'revoked' })
    // and the instance now knows: the next call stops before any storage read
    await expect(elsewhere.write(note('Again after the revoke'))).rejects.toMatchObject({ code: 'revoked' })
    const titles = (await (await stored()).listObservations({})).notes.map((o) => o.title)
    expect(titles).toContain('Before the revoke')
    expect(titles).not.toContain('Right after the revoke')
    expect(titles).not.toContain('Again after the revoke')
  })

  it('refuses every other change and every read in another instance the moment revoke() resolves', async () => {
    const calls: Array<[string, (c: Connection, slug: string) => Promise<unknown>]> = [
      ['update', (c, slug) => c.update(slug, { content: 'changed' })],
      ['delete', (c, slug) => c.delete(slug)],
      ['storeFile', (c) => c.storeFile({ path: 'a.txt', data: 'bytes' })],
      ['consolidate', (c) => c.consolidate()],
      ['recall', (c) => c.recall({ query: 'Ada' })],
      ['getObservation', (c, slug) => c.getObservation(slug)],
      ['inspect', (c) => c.inspect('Ada Lovelace')],
      ['listObservations', (c) => c.listObservations({})],
      ['listFiles', (c) => c.listFiles()],
      ['listProposals', (c) => c.listProposals()],
      ['graphSlice', (c) => c.graphSlice({})],
      ['vocabulary', (c) => c.vocabulary()],
    ]
    for (const [name, call] of calls) {
      const { elsewhere, stored, slug } = await revokedElsewhere('full')
      await expect(call(elsewhere, slug), name).rejects.toMatchObject({ code: 'revoked' })
      const owner = await stored()
      expect((await owner.getObservation(slug)).content, name).toBe('Before the revoke.')
      expect(await owner.listFiles(), name).toEqual([])
    }
  })

  it('never stores a revoked connection live again, whatever an instance that had not heard of the revoke puts', async () => {
    const indexedDB = new IDBFactory()
    const memory = await createMemory({ name: 'shared', indexedDB, IDBKeyRange })
    opened.push(memory)
    const conn = await memory.connect({ agent: 'extension', tier: 'read_write' })
    const stale = memory.listConnections().find((c) => c.id === conn.id)!
    await memory.revoke(conn.id)
    const db = new MemoryDB(memory.info.id, { indexedDB, IDBKeyRange })
    try {
      await saveConnections(db, [{ ...stale, tokenHash: 'x', revokedAt: null }])
      expect((await db.connections.get(conn.id))!.revokedAt).not.toBeNull()
    } finally {
      db.close()
    }
  })
})
