// Several devices write observations (some with world time and supersessions) and aliases while randomly offline, updates arrive in
// random order, and in the end every device holds the same maps. Each device also keeps a
// copy built only from observeMemoryDoc's change reports, which must match its document.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import type { Alias, Observation } from '../../src/core/types'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { deleteAlias, deleteObservation, putAlias, putObservation } from '../helpers/doc-writes'
import { observeMemoryDoc } from '../../src/sync/observe'
import { alias, observation } from './fixture'

type Op =
  | { kind: 'put'; peer: number; slug: number; version: number }
  | { kind: 'delete'; peer: number; slug: number }
  | { kind: 'alias'; peer: number; variant: number; canonical: number }
  | { kind: 'unalias'; peer: number; variant: number }
  | { kind: 'toggle'; peer: number }
  | { kind: 'deliver'; peer: number; pick: number }

const peer = fc.nat(3)
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), peer, slug: fc.nat(5), version: fc.nat(9) }),
  fc.record({ kind: fc.constant('delete' as const), peer, slug: fc.nat(5) }),
  fc.record({ kind: fc.constant('alias' as const), peer, variant: fc.nat(3), canonical: fc.nat(3) }),
  fc.record({ kind: fc.constant('unalias' as const), peer, variant: fc.nat(3) }),
  fc.record({ kind: fc.constant('toggle' as const), peer }),
  fc.record({ kind: fc.constant('deliver' as const), peer, pick: fc.nat(50) }),
)

/** World time on some versions of a note: a start, an end, a note it supersedes (which may be deleted or not arrived yet). */
function worldTime(slug: number, version: number): Partial<Observation> {
  const day = (d: number) => `2025-0${1 + (d % 9)}-01T00:00:00.000Z`
  if (version % 3 === 0) return {}
  if (version % 3 === 1) return { validFrom: day(version), relationships: [{ source: `Entity s-${slug}`, type: 'at', target: `Entity s-${slug}`, description: '', weight: 1, validTo: day(version + 1) }] }
  return { validFrom: day(version), validTo: '2026-01-01T00:00:00.000Z', supersedes: [`s-${(slug + 1) % 6}`] }
}

interface Device {
  doc: Y.Doc
  online: boolean
  inbox: Uint8Array[]
  /** Maintained only from change reports. */
  seenObservations: Map<string, Observation>
  seenAliases: Map<string, Alias>
}

const NET = Symbol('net')

function sorted<T>(m: Map<string, T>): Array<[string, T]> {
  return [...m].sort(([a], [b]) => (a < b ? -1 : 1))
}

function run(deviceCount: number, ops: Op[], drainOrder: number[]): void {
  const devices: Device[] = Array.from({ length: deviceCount }, () => ({
    doc: createMemoryDoc(), online: true, inbox: [], seenObservations: new Map(), seenAliases: new Map(),
  }))
  const send = (from: number, update: Uint8Array) => {
    devices.forEach((d, i) => {
      if (i !== from && d.online) d.inbox.push(update)
    })
  }
  devices.forEach((d, i) => {
    d.doc.on('update', (u: Uint8Array, origin: unknown) => {
      // Like y-websocket: local changes go out while connected; received ones are not re-sent.
      if (origin !== NET && d.online) send(i, u)
    })
    observeMemoryDoc(d.doc, (c) => {
      for (const o of c.observations.upserted) d.seenObservations.set(o.slug, o)
      for (const s of c.observations.deleted) d.seenObservations.delete(s)
      for (const a of c.aliases.upserted) d.seenAliases.set(a.variant, a)
      for (const v of c.aliases.deleted) d.seenAliases.delete(v)
    })
  })
  const deliver = (d: Device, pick: number) => {
    if (!d.online || d.inbox.length === 0) return
    const [u] = d.inbox.splice(pick % d.inbox.length, 1)
    Y.applyUpdate(d.doc, u!, NET)
  }
  // Reconnecting is the sync handshake: each side queues what the other lacks.
  const reconnect = (i: number) => {
    const d = devices[i]!
    d.online = true
    devices.forEach((o, j) => {
      if (j === i || !o.online) return
      o.inbox.push(Y.encodeStateAsUpdate(d.doc, Y.encodeStateVector(o.doc)))
      d.inbox.push(Y.encodeStateAsUpdate(o.doc, Y.encodeStateVector(d.doc)))
    })
  }

  for (const o of ops) {
    const i = o.peer % deviceCount
    const d = devices[i]!
    switch (o.kind) {
      case 'put':
        putObservation(d.doc, observation(`s-${o.slug}`, { content: `v${o.version} from ${i}`, ...worldTime(o.slug, o.version) }))
        break
      case 'delete':
        deleteObservation(d.doc, `s-${o.slug}`)
        break
      case 'alias':
        putAlias(d.doc, alias(`variant ${o.variant}`, `canonical ${o.canonical}`))
        break
      case 'unalias':
        deleteAlias(d.doc, `variant ${o.variant}`)
        break
      case 'toggle':
        if (d.online) {
          d.online = false
          d.inbox = []
        } else reconnect(i)
        break
      case 'deliver':
        deliver(d, o.pick)
        break
    }
  }
  devices.forEach((d, i) => {
    if (!d.online) reconnect(i)
  })
  let step = 0
  while (devices.some((d) => d.inbox.length > 0)) {
    const pick = drainOrder[step % Math.max(1, drainOrder.length)] ?? 0
    const withMail = devices.filter((d) => d.inbox.length > 0)
    deliver(withMail[(pick + step) % withMail.length]!, pick)
    step++
  }

  const reference = readMemoryDoc(devices[0]!.doc)
  for (const d of devices) {
    const snap = readMemoryDoc(d.doc)
    expect(sorted(snap.observations)).toEqual(sorted(reference.observations))
    expect(sorted(snap.aliases)).toEqual(sorted(reference.aliases))
    expect(snap.invalid).toEqual([])
    expect(sorted(d.seenObservations)).toEqual(sorted(snap.observations))
    expect(sorted(d.seenAliases)).toEqual(sorted(snap.aliases))
  }
}

describe('convergence under random offline periods and delivery order', () => {
  it('2-4 devices end with identical observations and aliases', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 4 }), fc.array(op, { minLength: 1, maxLength: 60 }), fc.array(fc.nat(100), { maxLength: 20 }), run),
      { seed: 20260314, numRuns: 60 },
    )
  })
})
