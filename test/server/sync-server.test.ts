import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { ROOTS } from '../../src/sync/layout'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { deleteObservation, putAlias, putObservation } from '../helpers/doc-writes'
import { observeMemoryDoc, type MemoryDocChange } from '../../src/sync/observe'
import { alias, observation, waitFor } from '../sync/fixture'
import { startHarness, type Harness } from './harness'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

/** Map contents with sorted keys, so two documents compare equal whatever their insertion order. */
const sorted = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).sort(([x], [y]) => (x < y ? -1 : 1)))
const contents = (doc: Y.Doc) => JSON.stringify({
  observations: sorted(doc.getMap(ROOTS.observations).toJSON()),
  aliases: sorted(doc.getMap(ROOTS.aliases).toJSON()),
})

describe('sync through the real server', () => {
  it('two clients converge, and the receiver sees exactly the remote change', async () => {
    const { token } = h.token('mem-a', 'full')
    const a = h.client('mem-a', token)
    const b = h.client('mem-a', token)
    await Promise.all([a.whenSynced(), b.whenSynced()])
    const seen: MemoryDocChange[] = []
    observeMemoryDoc(b.provider.doc, (c) => seen.push(c))
    putObservation(a.provider.doc, observation('first-1'))
    putAlias(a.provider.doc, alias('acme inc', 'acme'))
    await waitFor('b to receive', () => readMemoryDoc(b.provider.doc).aliases.size === 1)
    expect(contents(b.provider.doc)).toEqual(contents(a.provider.doc))
    const remote = seen.filter((c) => !c.local)
    expect(remote.flatMap((c) => c.observations.upserted.map((o) => o.slug))).toEqual(['first-1'])
    expect(remote.every((c) => c.origin === b.provider)).toBe(true)
    expect(b.status.state).toBe('online')
    expect(b.status.lastSyncedAt).not.toBeNull()
  })

  it('offline edits on both sides converge after reconnecting', async () => {
    const { token } = h.token('mem-b', 'full')
    const a = h.client('mem-b', token)
    const b = h.client('mem-b', token)
    await Promise.all([a.whenSynced(), b.whenSynced()])
    putObservation(a.provider.doc, observation('shared-1'))
    await waitFor('shared to arrive', () => readMemoryDoc(b.provider.doc).observations.has('shared-1'))
    a.disconnect()
    b.disconnect()
    expect(a.status.state).toBe('offline')
    putObservation(a.provider.doc, observation('from-a-1'))
    putObservation(a.provider.doc, observation('shared-1', { content: 'edited on a' }))
    putObservation(b.provider.doc, observation('from-b-1'))
    deleteObservation(b.provider.doc, 'shared-1')
    putAlias(b.provider.doc, alias('x corp', 'x'))
    a.connect()
    b.connect()
    await Promise.all([a.whenSynced(), b.whenSynced()])
    await waitFor('convergence', () => contents(a.provider.doc) === contents(b.provider.doc) && readMemoryDoc(a.provider.doc).aliases.size === 1)
    const obs = readMemoryDoc(a.provider.doc).observations
    expect([...obs.keys()].sort()).toEqual(['from-a-1', 'from-b-1', 'shared-1'])
    // A concurrent edit and delete of one key: the edit is a new value, so it survives the delete.
    expect(obs.get('shared-1')?.content).toBe('edited on a')
  })

  it('a restarted server still holds every change', async () => {
    const { token } = h.token('mem-c', 'full')
    const a = h.client('mem-c', token)
    await a.whenSynced()
    for (let i = 0; i < 20; i++) putObservation(a.provider.doc, observation(`kept-${i}`))
    deleteObservation(a.provider.doc, 'kept-3')
    const observer = h.client('mem-c', token)
    await waitFor('the writes to pass through the server', () => readMemoryDoc(observer.provider.doc).observations.size === 19)
    observer.destroy()
    a.destroy()
    await h.restart()
    const fresh = h.client('mem-c', token, createMemoryDoc())
    await fresh.whenSynced()
    const obs = readMemoryDoc(fresh.provider.doc).observations
    expect(obs.size).toBe(19)
    expect(obs.has('kept-3')).toBe(false)
    expect(obs.get('kept-7')?.title).toBe('Title of kept-7')
  })

  it('a client that stays open through a restart reconnects and resyncs', async () => {
    const { token } = h.token('mem-d', 'full')
    const a = h.client('mem-d', token)
    await a.whenSynced()
    putObservation(a.provider.doc, observation('before-1'))
    await new Promise((r) => setTimeout(r, 100))
    await h.restart()
    putObservation(a.provider.doc, observation('during-1'))
    await waitFor('reconnect', () => a.status.state === 'online')
    const b = h.client('mem-d', token)
    await b.whenSynced()
    await waitFor('both observations on b', () => readMemoryDoc(b.provider.doc).observations.size === 2)
  })

  it('keeps rooms apart and answers plain HTTP with a hint', async () => {
    const one = h.token('mem-e', 'full')
    const two = h.token('mem-f', 'full')
    const a = h.client('mem-e', one.token)
    const b = h.client('mem-f', two.token)
    await Promise.all([a.whenSynced(), b.whenSynced()])
    putObservation(a.provider.doc, observation('only-e-1'))
    await new Promise((r) => setTimeout(r, 150))
    expect(readMemoryDoc(b.provider.doc).observations.size).toBe(0)
    const res = await fetch(`http://127.0.0.1:${h.server.port}/healthz`)
    expect(await res.json()).toEqual({ ok: true })
  })
})
