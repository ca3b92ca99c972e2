// A connection is revoked in one open instance of a memory (a tab, a worker) while another
// instance holds a handle of it. The promise: the revoke holds in every instance at once.
import { afterEach, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, openMemory, type Memory } from '../../src/index'
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
})
