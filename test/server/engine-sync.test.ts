// Two devices, each a memory on its own IndexedDB, sync through a real server on 127.0.0.1:
// offline edits on both, reconnect, converge; a server restart and a reopen lose nothing.
import type { ObservationInput } from '../../src/index'
import { afterEach, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { createMemory, openMemory, type Memory } from '../../src/index'
import { ada, engine as analyticalEngine, society } from '../engine/fixture'
import { startHarness, type Harness } from './harness'
import { engineOf } from '../../src/internals'

let h: Harness | undefined
const opened: Memory[] = []
afterEach(async () => {
  for (const m of opened.splice(0)) await m.close().catch(() => undefined)
  await h?.cleanup()
  h = undefined
})

async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

const obs = (title: string, entities: NonNullable<ObservationInput['entities']>, relationships: NonNullable<ObservationInput['relationships']> = []): ObservationInput => ({ title, content: `${title}.`, entities, relationships })

describe('memories syncing through the server', () => {
  it('converges after offline edits on two devices, and keeps everything across a server restart and a reopen', async () => {
    h = await startHarness()
    const factoryA = new IDBFactory()
    const a = await createMemory({ name: 'shared', indexedDB: factoryA, IDBKeyRange })
    const b = await createMemory({ name: 'shared', id: a.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
    opened.push(a, b)
    const { token } = h.token(a.info.id, 'full')
    const connA = await a.connect({ agent: 'a', tier: 'full' })
    const connB = await b.connect({ agent: 'b', tier: 'full' })
    const written = await connA.write(obs('Ada', [ada, analyticalEngine], [{ source: ada.name, type: 'designed programs for', target: analyticalEngine.name }]))

    const syncA = await a.sync({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false })
    const syncB = await b.sync({ serverUrl: h.server.url, token, WebSocketPolyfill: WebSocket, crossTab: false })
    await until(async () => {
      await syncB.settled()
      return engineOf(b).committedGraph.getObservation(written.slug) !== undefined
    })

    syncA.client!.disconnect()
    syncB.client!.disconnect()
    await connA.update(written.slug, { entities: [{ ...ada, description: 'Wrote the first published program' }] })
    const fromB = await connB.write(obs('Society', [society, ada], [{ source: ada.name, type: 'member of', target: society.name }]))
    syncA.client!.connect()
    syncB.client!.connect()
    const converged = async () => {
      await syncA.settled()
      await syncB.settled()
      return graphFingerprint(engineOf(a).committedGraph) === graphFingerprint(engineOf(b).committedGraph)
    }
    await until(converged)
    expect(engineOf(a).committedGraph.getObservation(fromB.slug)).toBeDefined()
    // the update made offline on A reached B (the entity's description comes from B's later note)
    expect(engineOf(b).committedGraph.getObservation(written.slug)?.entities[0]?.description).toBe('Wrote the first published program')

    await h.restart()
    await until(() => syncA.client!.status.state === 'online')
    const late = await connA.write(obs('After restart', [{ name: 'Charles Babbage', type: 'person', description: 'Designed the engine' }]))
    await until(async () => {
      await syncB.settled()
      return engineOf(b).committedGraph.getObservation(late.slug) !== undefined
    })

    // reopen device A from its own storage: the document and the graph are both there
    await a.close()
    opened.splice(opened.indexOf(a), 1)
    const reopened = await openMemory(a.info.id, { indexedDB: factoryA, IDBKeyRange })
    opened.push(reopened)
    const again = await reopened.sync()
    await again.settled()
    expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(graphFingerprint(engineOf(b).committedGraph))
    expect(again.doc.getMap('observations').size).toBe(3)
  })

  it('a read token receives changes but its own writes are refused and reported', async () => {
    h = await startHarness()
    const a = await createMemory({ name: 'shared', indexedDB: new IDBFactory(), IDBKeyRange })
    const b = await createMemory({ name: 'shared', id: a.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
    opened.push(a, b)
    const full = h.token(a.info.id, 'full').token
    const read = h.token(a.info.id, 'read').token
    const syncA = await a.sync({ serverUrl: h.server.url, token: full, WebSocketPolyfill: WebSocket, crossTab: false })
    const syncB = await b.sync({ serverUrl: h.server.url, token: read, WebSocketPolyfill: WebSocket, crossTab: false })
    await (await a.connect({ agent: 'a', tier: 'full' })).write(obs('Ada', [ada]))
    await until(async () => {
      await syncB.settled()
      return engineOf(b).committedGraph.entities.has('ada lovelace')
    })
    await (await b.connect({ agent: 'b', tier: 'full' })).write(obs('Society', [society]))
    await until(() => syncB.client!.status.refusals.length > 0)
    expect(syncB.client!.status.diverged).toBe(true)
    await new Promise((r) => setTimeout(r, 200))
    await syncA.settled()
    expect(engineOf(a).committedGraph.entities.has('royal society')).toBe(false)
  })
})
