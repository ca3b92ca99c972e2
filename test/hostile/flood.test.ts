// A peer floods the server with updates it will refuse, or with an update that waits on
// history it never sends. The promise: a refusal costs the update's size, not the room's (the
// room copy is never rebuilt for it), a waiting update is not merged into every later
// message, and a socket over its refusal budget is closed while others keep syncing.
import * as encoding from 'lib0/encoding'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import { replicaBuildCount } from '../../src/server/update-policy'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { observation, waitFor } from '../sync/fixture'
import { refusedAs, send, sendRaw, slugs } from './peer'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

function newNote(slug: string): Uint8Array {
  const doc = createMemoryDoc()
  putObservation(doc, observation(slug))
  return Y.encodeStateAsUpdate(doc)
}

describe('a flood of refused updates', () => {
  it('never rebuilds the room copy, and closes the socket past its budget while a writer keeps syncing', async () => {
    const writer = h.client('mem-1', h.token('mem-1', 'read_write', 'writer').token)
    await writer.whenSynced()
    for (let i = 0; i < 50; i++) putObservation(writer.provider.doc, observation(`seed-${i}`))
    const reader = h.client('mem-1', h.token('mem-1', 'read', 'flooder').token)
    await reader.whenSynced()
    await waitFor('the seed on the reader', () => slugs(reader.provider.doc).length === 50)
    send(reader, newNote('flood-0'))
    expect(await refusedAs(reader, 1)).toBe('read_only')
    const builds = replicaBuildCount()
    for (let i = 1; i < 25; i++) send(reader, newNote(`flood-${i}`))
    expect(await refusedAs(reader, 25)).toBe('read_only')
    expect(replicaBuildCount()).toBe(builds)

    for (let i = 25; i < 40; i++) send(reader, newNote(`flood-${i}`))
    await waitFor('the over-budget close', () => h.logs.some((l) => l.event === 'over_budget'))
    await waitFor('the over-budget refusal', () => reader.status.refusals.some((r) => r.code === 'over_budget'))
    putObservation(writer.provider.doc, observation('still-writing-1'))
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await waitFor('the writer still syncing', () => slugs(watcher.provider.doc).includes('still-writing-1'))
    expect(slugs(watcher.provider.doc).some((s) => s.startsWith('flood-'))).toBe(false)
  })
})

describe('a socket closed over its budget', () => {
  it('is let go at once, though the server had stopped reading it (no half-closed socket held for half a minute)', async () => {
    // a read connection's own updates are refused unread, each counting against its budget
    const e = encoding.createEncoder()
    encoding.writeVarUint(e, 0)
    encoding.writeVarUint(e, syncProtocol.messageYjsUpdate)
    encoding.writeVarUint8Array(e, newNote('flood'))
    const message = encoding.toUint8Array(e)
    const ws = new WebSocket(`${h.server.url}/mem-1?token=${encodeURIComponent(h.token('mem-1', 'read', 'flooder').token)}`)
    let closed: number | null = null
    ws.on('close', (code) => {
      closed = code
    })
    ws.on('error', () => undefined)
    await new Promise((resolve) => ws.once('open', resolve))
    // enough at once that the server pauses reading the socket while they wait to be judged
    for (let i = 0; i < 400; i++) ws.send(message)
    await waitFor('the over-budget close', () => h.logs.some((l) => l.event === 'over_budget'))
    // the close handshake would wait on a reply the server no longer reads: the socket is ended instead
    await waitFor('the socket ended', () => closed !== null, 10_000)
    // and the client was told why
    expect(closed).toBe(CLOSE.overBudget)
    ws.terminate()
  })
})

describe('an update that waits on history never sent', () => {
  it('is refused once after the handshake and not merged into the next update, which goes through', async () => {
    const attacker = h.client('mem-1', h.token('mem-1', 'read_write', 'attacker').token)
    await attacker.whenSynced()
    const orphan = createMemoryDoc()
    putObservation(orphan, observation('never-sent-1'))
    const vector = Y.encodeStateVector(orphan)
    putObservation(orphan, observation('depends-1', { content: 'y'.repeat(15_000) }))
    // raw: the attacker's own document would keep it waiting rather than send it
    sendRaw(attacker, Y.encodeStateAsUpdate(orphan, vector))
    expect(await refusedAs(attacker, 1)).toBe('incomplete')
    send(attacker, newNote('independent-1'))
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await waitFor('the independent note', () => slugs(watcher.provider.doc).includes('independent-1'))
    expect(attacker.status.refusals.map((r) => r.code)).toEqual(['incomplete'])
  })
})
