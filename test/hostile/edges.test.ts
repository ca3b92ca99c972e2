// Smaller holes a caller with a valid token could use: a recall limit named after an Object
// method, appendix paths that display as another path, a malformed room path, and updates
// sent in the moment after a revoke from the CLI returned.
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, type Memory } from '../../src/index'
import { TokenRegistry } from '../../src/server/token-registry'
import { CLOSE } from '../../src/sync/close-codes'
import { putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { observation, waitFor } from '../sync/fixture'
import { slugs } from './peer'

let h: Harness
const opened: Memory[] = []
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
  await h.cleanup()
})

describe('the library', () => {
  it('refuses a recall limit that only exists on Object.prototype, and paths with control or bidirectional characters', async () => {
    const memory = await createMemory({ name: 'edges', indexedDB: new IDBFactory(), IDBKeyRange })
    opened.push(memory)
    const conn = await memory.connect({ agent: 'a', tier: 'full' })
    await expect(conn.recall({ limits: { toString: 3 } as never })).rejects.toMatchObject({ code: 'invalid_request' })
    for (const path of ['docs/\u202Etxt.exe', 'docs/a\nb.txt', 'docs/\u2066x.txt']) {
      await expect(conn.storeFile({ path, data: 'x', description: 'd' })).rejects.toMatchObject({ code: 'invalid_write' })
    }
    expect(await conn.listFiles()).toEqual([])
  })
})

describe('limits after normalizing', () => {
  it('refuses a write whose tag or type outgrows its limit once case-folded or NFKC-normalized; nothing is committed and the memory still syncs after a reopen', async () => {
    const indexedDB = new IDBFactory()
    const memory = await createMemory({ name: 'normalized', indexedDB, IDBKeyRange })
    opened.push(memory)
    await memory.sync({ crossTab: false })
    const conn = await memory.connect({ agent: 'a', tier: 'full' })
    const entity = { name: 'Ada Lovelace', type: 'person', description: 'Mathematician' }
    const attempts = [
      { title: 'Tags', content: 'x', entities: [entity], tags: ['\u0130'.repeat(64)] },
      { title: 'Type', content: 'x', entities: [{ ...entity, type: '\uFDFA'.repeat(64) }] },
    ]
    for (const input of attempts) await expect(conn.write(input)).rejects.toMatchObject({ code: 'invalid_write' })
    expect((await conn.recall({})).observations).toEqual([])
    const id = memory.info.id
    opened.splice(opened.indexOf(memory), 1)
    await memory.close()
    const { openMemory } = await import('../../src/index')
    const again = await openMemory(id, { indexedDB, IDBKeyRange })
    opened.push(again)
    await (await again.sync({ crossTab: false })).settled()
  })
})

describe('the sync server', () => {
  it('closes a path with a bad percent-encoding as a bad request (final), not as unavailable (retried)', async () => {
    const ws = new WebSocket(`${h.server.url}/%E0%A4%A?token=x`)
    const code = await new Promise<number>((resolve) => ws.once('close', (c) => resolve(c)))
    expect(code).toBe(CLOSE.badRequest)
  })

  it('applies nothing sent after a revoke from another process returned', async () => {
    const { token, id } = h.token('mem-1', 'read_write', 'leaving')
    const writer = h.client('mem-1', token)
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await Promise.all([writer.whenSynced(), watcher.whenSynced()])
    new TokenRegistry(join(h.dataDir, 'tokens.json')).revoke(id)
    putObservation(writer.provider.doc, observation('after-revoke-1'))
    putObservation(writer.provider.doc, observation('after-revoke-2'))
    await waitFor('the socket closed as revoked', () => writer.status.state === 'denied')
    const fresh = h.client('mem-1', h.token('mem-1', 'read', 'fresh').token)
    await fresh.whenSynced()
    expect(slugs(fresh.provider.doc)).toEqual([])
  })
})
