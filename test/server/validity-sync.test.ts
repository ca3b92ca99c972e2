// Facts that change, on two devices syncing through a real server on 127.0.0.1: the interval
// rules hold on both, two devices superseding one note at once converge, deleting the successor
// on one device makes the predecessor current on the other, and a read_write token may
// supersede another connection's note.
import { afterEach, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { createMemory, type Connection, type Memory } from '../../src/index'
import { startHarness, type Harness } from './harness'
import { engineOf, ownerOf } from '../../src/internals'

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

const dana = { name: 'Dana Reyes', type: 'person', description: 'Engineer on the payments team' }
const org = (name: string) => ({ name, type: 'organization', description: `The company ${name}` })
const job = (name: string, extra: Record<string, unknown>) => ({ title: `Dana at ${name}`, content: `Dana works at ${name}.`, entities: [dana, org(name)], relationships: [{ source: dana.name, type: 'works_at', target: name }], ...extra })

/** What a device answers about Dana: every note with its marks, and the current employers. */
async function answers(conn: Connection) {
  const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
  const now = await conn.recall({ entity: 'Dana Reyes' })
  const past = await conn.recall({ entity: 'Dana Reyes', asOf: '2021-01-01' })
  const sort = <T extends { slug: string }>(list: T[]): T[] => [...list].sort((a, b) => (a.slug < b.slug ? -1 : 1))
  return {
    all: sort(all.observations).map(({ slug, validFrom, validTo, supersededBy, current }) => ({ slug, validFrom, validTo, supersededBy, current })),
    now: sort(now.observations).map((o) => o.slug),
    superseded: now.superseded,
    past: sort(past.observations).map((o) => o.slug),
  }
}

async function twoDevices(tierB: 'full' | 'read_write') {
  h = await startHarness()
  const a = await createMemory({ name: 'shared', indexedDB: new IDBFactory(), IDBKeyRange })
  const b = await createMemory({ name: 'shared', id: a.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
  opened.push(a, b)
  const syncA = await a.sync({ serverUrl: h.server.url, token: h.token(a.info.id, 'full').token, WebSocketPolyfill: WebSocket, crossTab: false })
  const syncB = await b.sync({ serverUrl: h.server.url, token: h.token(a.info.id, tierB).token, WebSocketPolyfill: WebSocket, crossTab: false })
  const connA = await a.connect({ agent: 'a', tier: 'full' })
  // kept on the device: a read_write token may not add connections to the memory
  const connB = await b.connect({ agent: 'b', tier: tierB, localOnly: true })
  const converged = async () => {
    await syncA.settled()
    await syncB.settled()
    return graphFingerprint(engineOf(a).committedGraph) === graphFingerprint(engineOf(b).committedGraph) && engineOf(a).committedGraph.observationCount === engineOf(b).committedGraph.observationCount
  }
  return { a, b, syncA, syncB, connA, connB, converged }
}

describe('validity in time across two devices syncing through the server', () => {
  it('two devices superseding one note while offline converge to the same history', async () => {
    const d = await twoDevices('full')
    const first = await d.connA.write(job('Acme', { observedAt: '2020-01-01' }))
    await until(async () => (await d.converged()) && engineOf(d.b).committedGraph.getObservation(first.slug) !== undefined)
    d.syncA.client!.disconnect()
    d.syncB.client!.disconnect()
    const onA = await d.connA.write(job('Beta', { observedAt: '2023-01-01', supersedes: [first.slug] }))
    const onB = await d.connB.write(job('Gamma', { validFrom: '2024-01-01', supersedes: [first.slug] }))
    d.syncA.client!.connect()
    d.syncB.client!.connect()
    await until(async () => (await d.converged()) && engineOf(d.a).committedGraph.observationCount === 3)
    const fromA = await answers(d.connA)
    expect(fromA).toEqual(await answers(d.connB))
    // the earliest successor closes it; both successors are named
    expect(fromA.all.find((o) => o.slug === first.slug)).toEqual({ slug: first.slug, validFrom: '2020-01-01T00:00:00.000Z', validTo: '2023-01-01T00:00:00.000Z', supersededBy: [onA.slug, onB.slug].sort(), current: false })
    expect(fromA.now).toEqual([onA.slug, onB.slug].sort())
    expect(fromA.superseded).toBe(1)
    expect(fromA.past).toEqual([first.slug])
  })

  it('deleting the successor on one device makes the predecessor current on the other; a "newer" note that is older is closed there too', async () => {
    const d = await twoDevices('full')
    const first = await d.connA.write(job('Acme', { validFrom: '2022-01-01' }))
    await until(async () => (await d.converged()) && engineOf(d.b).committedGraph.getObservation(first.slug) !== undefined)
    const late = await d.connB.write(job('Beta', { validFrom: '2024-01-01', supersedes: [first.slug] }))
    const older = await d.connB.write(job('Gamma', { validFrom: '2020-01-01', supersedes: [first.slug] }))
    await until(async () => (await d.converged()) && engineOf(d.a).committedGraph.observationCount === 3)
    expect((await answers(d.connA)).now).toEqual([late.slug])
    expect((await answers(d.connA)).all.find((o) => o.slug === older.slug)).toMatchObject({ validTo: '2022-01-01T00:00:00.000Z', current: false })
    expect((await answers(d.connA)).past).toEqual([older.slug])
    await d.connB.delete(late.slug)
    await until(async () => (await d.converged()) && engineOf(d.a).committedGraph.observationCount === 2)
    expect((await answers(d.connA)).now).toEqual([first.slug])
    expect(await answers(d.connA)).toEqual(await answers(d.connB))
  })

  it('intervals are half-open and notes that do not overlap never retire each other, on both devices', async () => {
    const d = await twoDevices('full')
    const ended = await d.connA.write(job('Acme', { validFrom: '2019-01-01', validTo: '2020-06-01' }))
    const next = await d.connA.write(job('Beta', { validFrom: '2020-06-01' }))
    await until(async () => (await d.converged()) && engineOf(d.b).committedGraph.observationCount === 2)
    // B names the ended note, but starts after it ended: nothing is retired
    const later = await d.connB.write(job('Gamma', { validFrom: '2021-01-01', supersedes: [ended.slug] }))
    await until(async () => (await d.converged()) && engineOf(d.a).committedGraph.observationCount === 3)
    for (const conn of [d.connA, d.connB]) {
      const at = async (asOf: string) => (await conn.recall({ entity: 'Dana Reyes', asOf })).observations.map((o) => o.slug).sort()
      expect(await at('2020-05-31T23:59:59.999Z')).toEqual([ended.slug])
      // the end is exclusive, the start inclusive: at the boundary only the next note holds
      expect(await at('2020-06-01')).toEqual([next.slug])
      expect(await at('2021-01-01')).toEqual([next.slug, later.slug].sort())
      const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
      const mark = all.observations.find((o) => o.slug === ended.slug)!
      expect([mark.validTo, mark.supersededBy]).toEqual(['2020-06-01T00:00:00.000Z', undefined])
    }
    expect(await answers(d.connA)).toEqual(await answers(d.connB))
  })

  it('a read_write token supersedes another connection\'s note: the server takes it, the old note stays as it was', async () => {
    const d = await twoDevices('read_write')
    const first = await d.connA.write(job('Acme', { observedAt: '2020-01-01' }))
    await until(async () => (await d.converged()) && engineOf(d.b).committedGraph.getObservation(first.slug) !== undefined)
    const before = await d.connA.getObservation(first.slug)
    const next = await d.connB.write(job('Beta', { observedAt: '2023-01-01', supersedes: [first.slug] }))
    await until(async () => (await d.converged()) && engineOf(d.a).committedGraph.getObservation(next.slug) !== undefined)
    expect(d.syncB.client!.status.refusals).toEqual([])
    expect(await d.connA.getObservation(first.slug)).toEqual(before)
    expect((await answers(d.connA)).now).toEqual([next.slug])
  })

  it('the owner\'s single-valued types reach the other device, whose consolidation then proposes; a read_write token cannot change them', async () => {
    const d = await twoDevices('read_write')
    await d.a.setSingleValued(['works_at'])
    const older = await d.connA.write(job('Acme', { observedAt: '2020-01-01' }))
    const newer = await d.connA.write(job('Beta', { observedAt: '2023-01-01' }))
    await until(async () => (await d.converged()) && engineOf(d.b).committedGraph.observationCount === 2 && d.b.singleValued().length === 1)
    expect(d.b.singleValued()).toEqual(['works_at'])
    const proposals = await d.connB.consolidate()
    expect(proposals.map((p) => p.pair)).toEqual([[older.slug, newer.slug]])
    // a rejection made on B reaches A
    await d.connB.rejectProposal(proposals[0]!.id)
    await until(async () => (await d.converged()) && ownerOf(d.a).listProposals().some((p) => p.id === proposals[0]!.id && p.status === 'rejected'))
    expect(await d.connA.consolidate()).toEqual([])
    // the settings are the owner's: B's change is refused by the server and A keeps its own
    await d.b.setSingleValued(['lives_in'])
    await until(() => d.syncB.client!.status.refusals.length > 0)
    await new Promise((r) => setTimeout(r, 200))
    await d.syncA.settled()
    expect(d.a.singleValued()).toEqual(['works_at'])
  })
})
