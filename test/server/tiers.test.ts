// The tier matrix over a real socket: who may connect, and which updates reach the room.
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TokenRegistry } from '../../src/server/token-registry'
import { CLOSE } from '../../src/sync/close-codes'
import type { SyncClient } from '../../src/sync/client'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { deleteObservation, putAlias, putFile, putObservation } from '../helpers/doc-writes'
import { rebuildFromServer } from '../helpers/recover'
import { alias, fileMeta, observation, waitFor } from '../sync/fixture'
import { startHarness, type Harness } from './harness'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

async function denied(client: SyncClient): Promise<number | undefined> {
  await expect(client.whenSynced(3_000)).rejects.toThrow(/refused the connection/)
  return client.status.closed?.code
}

/**
 * A write by `writer` that `watcher` must receive. The server handles one room's messages in
 * order, so once it arrives, anything refused before it would have arrived too.
 */
async function barrier(writer: SyncClient, watcher: SyncClient, slug: string): Promise<void> {
  putObservation(writer.provider.doc, observation(slug))
  await waitFor(`barrier ${slug}`, () => readMemoryDoc(watcher.provider.doc).observations.has(slug))
}

describe('who may connect', () => {
  it('refuses a socket without a token, with an unknown token, or for another memory', async () => {
    const { token } = h.token('mem-1', 'full')
    expect(await denied(h.client('mem-1', ''))).toBe(CLOSE.unauthorized)
    expect(await denied(h.client('mem-1', 'cairn_not-a-real-token'))).toBe(CLOSE.unauthorized)
    expect(await denied(h.client('mem-2', token))).toBe(CLOSE.forbidden)
    const refused = h.logs.filter((l) => l.event === 'connection_refused')
    expect(refused.map((l) => l.fields.code)).toEqual([CLOSE.unauthorized, CLOSE.unauthorized, CLOSE.forbidden])
    expect(JSON.stringify(h.logs)).not.toContain(token)
  })

  it('refuses a revoked token', async () => {
    const { token, id } = h.token('mem-1', 'read_write')
    h.server.tokens.revoke(id)
    expect(await denied(h.client('mem-1', token))).toBe(CLOSE.revoked)
  })

  it('closes the open sockets of a token the moment it is revoked, and only those', async () => {
    const revoked = h.token('mem-1', 'read_write', 'leaving')
    const kept = h.token('mem-1', 'read_write', 'staying')
    const a = h.client('mem-1', revoked.token)
    const a2 = h.client('mem-1', revoked.token)
    const b = h.client('mem-1', kept.token)
    await Promise.all([a.whenSynced(), a2.whenSynced(), b.whenSynced()])
    h.server.tokens.revoke(revoked.id)
    await waitFor('revoked sockets to close', () => a.status.state === 'denied' && a2.status.state === 'denied', 2_000)
    expect(a.status.closed?.code).toBe(CLOSE.revoked)
    putObservation(a.provider.doc, observation('after-revoke-1'))
    await barrier(b, b, 'still-works-1')
    expect(b.status.state).toBe('online')
    expect(readMemoryDoc(b.provider.doc).observations.has('after-revoke-1')).toBe(false)
  })

  it('picks up a revoke written by another process (the CLI) while connected', async () => {
    const { token, id } = h.token('mem-1', 'full')
    const a = h.client('mem-1', token)
    await a.whenSynced()
    new TokenRegistry(join(h.dataDir, 'tokens.json')).revoke(id)
    await waitFor('the watcher to close the socket', () => a.status.state === 'denied', 3_000)
    expect(a.status.closed?.code).toBe(CLOSE.revoked)
  })
})

describe('which updates reach the room', () => {
  it('read: receives updates, its own are refused and reported', async () => {
    const writer = h.client('mem-1', h.token('mem-1', 'full').token)
    const readTok = h.token('mem-1', 'read')
    const reader = h.client('mem-1', readTok.token)
    await Promise.all([writer.whenSynced(), reader.whenSynced()])
    putObservation(writer.provider.doc, observation('from-writer-1'))
    await waitFor('reader to receive', () => readMemoryDoc(reader.provider.doc).observations.has('from-writer-1'))
    expect(reader.status.refusals).toEqual([])

    const refusals: string[] = []
    reader.on('refused', (r) => refusals.push(r.code))
    putObservation(reader.provider.doc, observation('from-reader-1'))
    await waitFor('the refusal', () => reader.status.refusals.length === 1)
    expect(refusals).toEqual(['read_only'])
    expect(reader.status.diverged).toBe(true)
    // refused unread: a read connection's updates are never decoded, so no keys are named
    expect(reader.status.refusals[0]!.keys).toEqual({})
    await barrier(writer, writer, 'barrier-1')
    expect(readMemoryDoc(writer.provider.doc).observations.has('from-reader-1')).toBe(false)
    const logged = h.logs.filter((l) => l.event === 'update_refused')
    expect(logged).toHaveLength(1)
    expect(logged[0]!.fields).toMatchObject({ room: 'mem-1', connection: readTok.id, tier: 'read', code: 'read_only' })
    expect(JSON.stringify(h.logs)).not.toContain(readTok.token)
  })

  it('read_write: new observations, aliases and files pass; editing or deleting an existing observation is refused', async () => {
    const full = h.client('mem-1', h.token('mem-1', 'full').token)
    await full.whenSynced()
    putObservation(full.provider.doc, observation('existing-1'))
    putObservation(full.provider.doc, observation('existing-2'))
    const rwTok = h.token('mem-1', 'read_write')
    const editor = h.client('mem-1', rwTok.token)
    const adder = h.client('mem-1', h.token('mem-1', 'read_write').token)
    await Promise.all([editor.whenSynced(), adder.whenSynced()])
    await waitFor('initial state', () => readMemoryDoc(editor.provider.doc).observations.size === 2)

    putObservation(adder.provider.doc, observation('added-1'))
    putAlias(adder.provider.doc, alias('acme inc', 'acme'))
    putAlias(adder.provider.doc, alias('acme inc', 'acme corporation'))
    putFile(adder.provider.doc, fileMeta('docs/a.txt', 3), new Uint8Array([1, 2, 3]))
    await waitFor('additions to reach the full client', () => {
      const s = readMemoryDoc(full.provider.doc)
      return s.observations.has('added-1') && s.aliases.get('acme inc')?.canonical === 'acme corporation' && s.files.has('docs/a.txt')
    })
    expect(adder.status.refusals).toEqual([])

    putObservation(editor.provider.doc, observation('existing-1', { content: 'rewritten' }))
    await waitFor('edit refusal', () => editor.status.refusals.length === 1)
    expect(editor.status.refusals[0]).toMatchObject({ code: 'not_additive', tier: 'read_write', keys: { observations: ['existing-1'] } })

    const deleter = h.client('mem-1', h.token('mem-1', 'read_write').token)
    await deleter.whenSynced()
    await waitFor('deleter state', () => readMemoryDoc(deleter.provider.doc).observations.has('existing-2'))
    deleteObservation(deleter.provider.doc, 'existing-2')
    await waitFor('delete refusal', () => deleter.status.refusals.length === 1)
    expect(deleter.status.refusals[0]).toMatchObject({ code: 'not_additive', keys: { observations: ['existing-2'] } })

    await barrier(full, full, 'barrier-1')
    const room = readMemoryDoc(full.provider.doc).observations
    expect(room.get('existing-1')?.content).toBe('Content of existing-1')
    expect(room.has('existing-2')).toBe(true)

    // Its next change builds on the refused one, so it cannot land either, and says so.
    putObservation(editor.provider.doc, observation('later-1'))
    await waitFor('follow-up refusal', () => editor.status.refusals.length === 2)
    expect(editor.status.refusals[1]!.code).toBe('incomplete')
    await barrier(full, full, 'barrier-2')
    expect(readMemoryDoc(full.provider.doc).observations.has('later-1')).toBe(false)
  })

  it('read_write: offline edits that alter an existing observation are refused on reconnect', async () => {
    const full = h.client('mem-1', h.token('mem-1', 'full').token)
    await full.whenSynced()
    putObservation(full.provider.doc, observation('existing-1'))
    const rw = h.client('mem-1', h.token('mem-1', 'read_write').token)
    await rw.whenSynced()
    await waitFor('rw state', () => readMemoryDoc(rw.provider.doc).observations.has('existing-1'))
    rw.disconnect()
    putObservation(rw.provider.doc, observation('existing-1', { title: 'Offline rename' }))
    rw.connect()
    await waitFor('refusal after reconnect', () => rw.status.refusals.length >= 1)
    expect(rw.status.refusals[0]!.code).toBe('not_additive')
    await barrier(full, full, 'barrier-1')
    expect(readMemoryDoc(full.provider.doc).observations.get('existing-1')?.title).toBe('Title of existing-1')
  })

  it('full: edits and deletes pass', async () => {
    const a = h.client('mem-1', h.token('mem-1', 'full').token)
    const b = h.client('mem-1', h.token('mem-1', 'full').token)
    await Promise.all([a.whenSynced(), b.whenSynced()])
    putObservation(a.provider.doc, observation('one-1'))
    putObservation(a.provider.doc, observation('two-1'))
    await waitFor('b state', () => readMemoryDoc(b.provider.doc).observations.size === 2)
    putObservation(b.provider.doc, observation('one-1', { content: 'corrected' }))
    deleteObservation(b.provider.doc, 'two-1')
    await waitFor('a to see the correction', () => {
      const s = readMemoryDoc(a.provider.doc).observations
      return s.get('one-1')?.content === 'corrected' && !s.has('two-1')
    })
    expect(b.status.refusals).toEqual([])
    expect(h.logs.some((l) => l.event === 'update_refused')).toBe(false)
  })
})

describe('recovering after a refusal', () => {
  it('rebuilds from the server state, keeps the additions and names the dropped edit', async () => {
    const full = h.client('mem-1', h.token('mem-1', 'full').token)
    await full.whenSynced()
    putObservation(full.provider.doc, observation('existing-1'))
    const rwToken = h.token('mem-1', 'read_write').token
    const rw = h.client('mem-1', rwToken)
    await rw.whenSynced()
    await waitFor('rw state', () => readMemoryDoc(rw.provider.doc).observations.has('existing-1'))
    rw.disconnect()
    putObservation(rw.provider.doc, observation('existing-1', { content: 'not allowed' }))
    putObservation(rw.provider.doc, observation('new-offline-1'))
    rw.connect()
    await waitFor('refusal', () => rw.status.diverged)

    const serverView = h.client('mem-1', rwToken)
    await serverView.whenSynced()
    const { doc, dropped, kept } = rebuildFromServer(serverView.provider.doc, rw.provider.doc, 'read_write')
    expect(dropped.observations).toEqual(['existing-1'])
    expect(kept.observations?.put?.map((o) => o.slug)).toEqual(['new-offline-1'])
    rw.destroy()
    serverView.destroy()
    const fresh = h.client('mem-1', rwToken, doc)
    await fresh.whenSynced()
    await waitFor('the kept addition to reach the full client', () => readMemoryDoc(full.provider.doc).observations.has('new-offline-1'))
    expect(readMemoryDoc(full.provider.doc).observations.get('existing-1')?.content).toBe('Content of existing-1')
    expect(fresh.status.refusals).toEqual([])
  })
})
