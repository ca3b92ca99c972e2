// 2-4 devices, each an engine on its own IndexedDB bound to its own document, make random
// writes, updates, deletes, files and merges while randomly cut off; once every update has been
// delivered in a random order, all devices hold equal derived graphs (entities, relationships,
// degrees), equal stored rows and equal recall results.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { createMemory, type Connection, type Memory } from '../../src/index'
import { bindMemoryDoc, type DocBinding } from '../../src/sync/doc-bridge'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { engineOf } from '../../src/internals'

const NAMES = ['Acme', 'Acme Inc', 'Globex', 'Initech', 'Ada Lovelace', 'Grace Hopper']
type Op =
  | { kind: 'write'; peer: number; a: number; b: number; words: number }
  | { kind: 'update'; peer: number; pick: number; words: number }
  | { kind: 'delete'; peer: number; pick: number }
  | { kind: 'file'; peer: number; n: number }
  | { kind: 'merge'; peer: number }
  | { kind: 'toggle'; peer: number }
  | { kind: 'deliver'; peer: number; pick: number }
  | { kind: 'supersede'; peer: number; pick: number; day: number; to: number }

const peer = fc.nat(3)
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), peer, a: fc.nat(5), b: fc.nat(5), words: fc.nat(20) }) },
  fc.record({ kind: fc.constant('update' as const), peer, pick: fc.nat(20), words: fc.nat(20) }),
  fc.record({ kind: fc.constant('delete' as const), peer, pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('file' as const), peer, n: fc.nat(3) }),
  fc.record({ kind: fc.constant('merge' as const), peer }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('toggle' as const), peer }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), peer, pick: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('supersede' as const), peer, pick: fc.nat(20), day: fc.nat(8), to: fc.nat(9) }) },
)
const day = (n: number) => `2026-01-0${n + 1}T00:00:00.000Z`
const WORDS = ['company', 'maker', 'rockets', 'software', 'mathematician', 'navy', 'compiler', 'paper', 'office', 'printer']
const text = (n: number) => Array.from({ length: 3 }, (_, i) => WORDS[(n + i * 3) % WORDS.length]).join(' ')

interface Device {
  memory: Memory
  conn: Connection
  doc: Y.Doc
  binding: DocBinding
  online: boolean
  inbox: Uint8Array[]
  slugs: string[]
}
const NET = Symbol('net')

async function run(count: number, ops: Op[], order: number[]): Promise<void> {
  const first = await createMemory({ name: 'p', indexedDB: new IDBFactory(), IDBKeyRange })
  const devices: Device[] = []
  for (let i = 0; i < count; i++) {
    const memory = i === 0 ? first : await createMemory({ name: 'p', id: first.info.id, indexedDB: new IDBFactory(), IDBKeyRange })
    const doc = createMemoryDoc()
    devices.push({ memory, conn: await memory.connect({ agent: `d${i}`, tier: 'full' }), doc, binding: await bindMemoryDoc(engineOf(memory), doc), online: true, inbox: [], slugs: [] })
  }
  devices.forEach((d, i) =>
    d.doc.on('update', (u: Uint8Array, origin: unknown) => {
      if (origin === NET || !d.online) return
      devices.forEach((o, j) => j !== i && o.online && o.inbox.push(u))
    }),
  )
  const reconnect = (i: number) => {
    const d = devices[i]!
    d.online = true
    devices.forEach((o, j) => {
      if (j === i || !o.online) return
      o.inbox.push(Y.encodeStateAsUpdate(d.doc, Y.encodeStateVector(o.doc)))
      d.inbox.push(Y.encodeStateAsUpdate(o.doc, Y.encodeStateVector(d.doc)))
    })
  }
  const deliver = async (d: Device, pick: number) => {
    if (!d.online || !d.inbox.length) return
    const [u] = d.inbox.splice(pick % d.inbox.length, 1)
    Y.applyUpdate(d.doc, u!, NET)
    await d.binding.settled()
  }
  const known = (d: Device) => d.slugs.filter((s) => engineOf(d.memory).committedGraph.getObservation(s))
  for (const o of ops) {
    const i = o.peer % count
    const d = devices[i]!
    // refusals (a removed endpoint, a stale proposal) are part of the game and change nothing
    const attempt = async (f: () => Promise<unknown>) => f().catch(() => undefined)
    switch (o.kind) {
      case 'write': {
        const a = NAMES[o.a]!
        const b = NAMES[o.b]!
        // now and then the second entity is only named, not described (refused while it is new)
        const entities = [...new Set([a, b])].map((name, k) => ({ name, type: 'thing', description: k === 1 && o.words % 4 === 0 ? '' : text(o.words + k) }))
        const relationships = a !== b ? [{ source: a, type: 'knows', target: b }] : []
        await attempt(async () => d.slugs.push((await d.conn.write({ title: `note ${o.words}`, content: text(o.words), entities, relationships, observedAt: day(o.words % 9) })).slug))
        break
      }
      case 'update': {
        const s = known(d)[o.pick % Math.max(1, known(d).length)]
        if (s) await attempt(() => d.conn.update(s, { content: text(o.words), entities: [{ name: NAMES[o.words % NAMES.length]!, type: 'thing', description: text(o.words + 1) }] }))
        break
      }
      case 'delete': {
        const s = known(d)[o.pick % Math.max(1, known(d).length)]
        if (s) await attempt(() => d.conn.delete(s))
        break
      }
      case 'file':
        await attempt(() => d.conn.storeFile({ path: `docs/f${o.n}-${i}.txt`, filename: 'f.txt', type: 'text/plain', data: new TextEncoder().encode(`file ${o.n}`), description: 'a file' }))
        break
      case 'merge':
        await attempt(async () => {
          const [p] = await d.conn.consolidate()
          if (p) await d.conn.acceptProposal(p.id)
        })
        break
      case 'supersede': {
        // a note replacing a known one from a day of its own (sometimes before the one it names)
        const s = known(d)[o.pick % Math.max(1, known(d).length)]
        const until = o.to > o.day ? { validTo: day(o.to) } : {}
        if (s) await attempt(async () => d.slugs.push((await d.conn.write({ title: `replaces ${o.day}`, content: text(o.day), entities: [{ name: NAMES[o.day % NAMES.length]!, type: 'thing', description: text(o.day) }], validFrom: day(o.day), ...until, supersedes: [s] })).slug))
        break
      }
      case 'toggle':
        if (d.online) {
          d.online = false
          d.inbox = []
        } else reconnect(i)
        break
      case 'deliver':
        await deliver(d, o.pick)
        break
    }
  }
  devices.forEach((d, i) => d.online || reconnect(i))
  let step = 0
  while (devices.some((d) => d.inbox.length)) {
    const withMail = devices.filter((d) => d.inbox.length)
    await deliver(withMail[(step + (order[step % Math.max(1, order.length)] ?? 0)) % withMail.length]!, order[step % Math.max(1, order.length)] ?? 0)
    step++
  }
  for (const d of devices) await d.binding.settled()

  const state = async (d: Device) => ({
    graph: graphFingerprint(engineOf(d.memory).committedGraph),
    entities: (await engineOf(d.memory).db.entities.toArray()).map((e) => [e.key, e.description, e.degree]).sort(),
    relationships: (await engineOf(d.memory).db.relationships.toArray()).map((r) => r.key).sort(),
    files: (await d.conn.listFiles()).map((f) => f.path),
    recall: await d.conn.recall({ query: 'company software' }).then((r) => [r.entities.map((e) => e.name), r.observations.map((o) => o.slug)]),
    page: (await d.conn.recall({ limits: { observations: 5 } })).observations.map((o) => o.slug),
    // world time: every note's interval and successors, what holds now, and as of a day
    history: (await d.conn.recall({ history: 'all', limits: { observations: 100 } })).observations.map((o) => [o.slug, o.validFrom, o.validTo, o.supersededBy, o.current]).sort(),
    now: (await d.conn.recall({ limits: { observations: 100 } })).observations.map((o) => o.slug).sort(),
    asOf: (await d.conn.recall({ asOf: day(4), limits: { observations: 100 } })).observations.map((o) => o.slug).sort(),
  })
  const reference = await state(devices[0]!)
  for (const d of devices.slice(1)) expect(await state(d)).toEqual(reference)
  for (const d of devices) {
    expect(d.binding.failures).toEqual([])
    d.binding.stop()
    await d.memory.close()
  }
}

describe('engines converge under random offline periods and delivery order', () => {
  it('2-4 devices end with equal graphs, rows, files and recall', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 4 }), fc.array(op, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(100), { maxLength: 20 }), run),
      { seed: 20261203, numRuns: 60 },
    )
  }, 120_000)
})
