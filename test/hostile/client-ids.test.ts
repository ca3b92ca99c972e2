// A peer with a valid token tries to make the server hold history under another device's Yjs
// client id (GC ranges over its next clocks, or items forged in its name), so that device's
// offline writes would never upload. The promise: the device's offline note reaches every
// peer and survives a restart, and the attacker is refused.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import type { Tier } from '../../src/core/types'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { observation, waitFor } from '../sync/fixture'
import { asClient, gcRange, refusedAs, send, slugs } from './peer'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

describe.each<Tier>(['read_write', 'full'])('a %s token cannot extend another device\'s client id', { timeout: 20_000 }, (tier) => {
  it('GC ranges and forged items over the victim\'s next clocks are refused; its offline note reaches everyone, across a restart', async () => {
    const victimDoc = createMemoryDoc()
    const victim = h.client('mem-1', h.token('mem-1', 'read_write', 'victim').token, victimDoc)
    await victim.whenSynced()
    putObservation(victimDoc, observation('victim-1'))
    const watcher = h.client('mem-1', h.token('mem-1', 'read', 'watcher').token)
    await waitFor('the victim note on the watcher', () => slugs(watcher.provider.doc).includes('victim-1'))

    victim.disconnect()
    putObservation(victimDoc, observation('victim-offline-1'))
    // the binding of the victim's client id must outlive the server
    await h.restart()

    const attackerToken = h.token('mem-1', tier, 'attacker').token
    const forger = h.client('mem-1', attackerToken)
    const wiper = h.client('mem-1', attackerToken)
    await Promise.all([forger.whenSynced(), wiper.whenSynced()])
    const clock = Y.getState(wiper.provider.doc.store, victimDoc.clientID)
    expect(clock).toBeGreaterThan(0)
    send(forger, asClient(forger.provider.doc, victimDoc.clientID, (d) => putObservation(d, observation('forged-1'))))
    send(wiper, gcRange(victimDoc.clientID, clock, 1_000_000))
    expect(await refusedAs(forger, 1)).toBe('not_owner')
    expect(await refusedAs(wiper, 1)).toBe('not_owner')

    victim.connect()
    await waitFor('the offline note on the watcher', () => slugs(watcher.provider.doc).includes('victim-offline-1'))
    expect(slugs(watcher.provider.doc)).toEqual(['victim-1', 'victim-offline-1'])
    expect(slugs(victimDoc)).toEqual(['victim-1', 'victim-offline-1'])
    expect(victim.status.refusals).toEqual([])

    await h.restart()
    const fresh = h.client('mem-1', h.token('mem-1', 'read', 'fresh').token)
    await fresh.whenSynced()
    expect(slugs(fresh.provider.doc)).toEqual(['victim-1', 'victim-offline-1'])
  })
})

describe('a device keeps its own client id', () => {
  it('reconnects through a restart and goes on writing under the same id, with a new socket of the same token', async () => {
    const token = h.token('mem-2', 'read_write', 'device').token
    const doc = createMemoryDoc()
    const device = h.client('mem-2', token, doc)
    await device.whenSynced()
    putObservation(doc, observation('before-1'))
    const watcher = h.client('mem-2', h.token('mem-2', 'read', 'watcher').token)
    await waitFor('before-1 on the watcher', () => slugs(watcher.provider.doc).includes('before-1'))
    await h.restart()
    putObservation(doc, observation('after-1'))
    await waitFor('after-1 on the watcher', () => slugs(watcher.provider.doc).includes('after-1'))
    expect(device.status.refusals).toEqual([])
    expect(readMemoryDoc(watcher.provider.doc).observations.size).toBe(2)
  })
})
