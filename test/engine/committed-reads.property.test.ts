// Reads see the last committed state: reads that do not wait in the write queue run at random
// moments while remote changes and local writes commit, and some of those commits fail inside
// their database transaction. Nothing a failed commit carried may ever be visible to a read, and
// after everything settles the live graph is exactly what the database holds.
import fc from 'fast-check'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import type { Observation } from '../../src/core/types'
import { createMemory, isMemoryError } from '../../src/index'
import { engineOf } from '../../src/internals'
import { observation } from '../sync/fixture'

const NAMES = ['Acme', 'Globex', 'Initech', 'Ada Lovelace', 'Grace Hopper']

type Step =
  | { kind: 'remote'; doomed: boolean; a: number; b: number; alias: boolean; deletes: number }
  | { kind: 'write'; doomed: boolean; a: number }
  | { kind: 'read'; what: number; ticks: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remote' as const), doomed: fc.boolean(), a: fc.nat(4), b: fc.nat(4), alias: fc.boolean(), deletes: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('write' as const), doomed: fc.boolean(), a: fc.nat(4) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), what: fc.nat(3), ticks: fc.nat(6) }) },
)

/** Marks what a doomed commit carries: a title, an entity name and an alias variant. */
const DOOM = 'doomed'

async function run(steps: Step[]): Promise<void> {
  const memory = await createMemory({ name: 'reads', indexedDB: new IDBFactory(), IDBKeyRange })
  const conn = await memory.connect({ agent: 'reader', tier: 'full' })
  const engine = engineOf(memory)
  // a doomed commit fails inside its transaction, after its other rows were written in it
  const refuse = (o: Observation) => {
    if (o.title.startsWith(DOOM)) throw new Error('refused by the test')
  }
  engine.db.observations.hook('creating', (_key, o) => refuse(o))
  engine.db.observations.hook('updating', (_changes, _key, o) => refuse(o as Observation))

  const seen: string[] = []
  const look = (what: string, text: string) => {
    const at = text.toLowerCase().indexOf(DOOM)
    if (at >= 0) seen.push(`${what}: ${text.slice(Math.max(0, at - 80), at + 80)}`)
  }
  const read = async (what: number) => {
    if (what === 0) {
      // a verdict's message repeats the query, which holds the doomed word itself
      const { message: _query, ...found } = await conn.recall({ query: `${DOOM} acme globex initech` })
      look('recall', JSON.stringify(found))
    }
    if (what === 1) look('notes', JSON.stringify(await conn.listObservations({})))
    if (what === 2) {
      for (const name of NAMES) {
        const detail = await conn.inspect(name).catch((err) => (isMemoryError(err) ? null : Promise.reject(err)))
        if (detail) look('inspect', JSON.stringify(detail))
      }
    }
    if (what === 3) look('graph', JSON.stringify(await conn.graphSlice({})))
  }

  const pending: Array<Promise<unknown>> = []
  let n = 0
  const live: string[] = []
  for (const s of steps) {
    if (s.kind === 'read') {
      for (let i = 0; i < s.ticks; i++) await new Promise((r) => setTimeout(r, 0))
      await read(s.what)
      continue
    }
    const id = `n${n++}`
    const title = s.doomed ? `${DOOM} ${id}` : `Note ${id}`
    if (s.kind === 'write') {
      const write = conn.write({
        title,
        content: `About ${NAMES[s.a]}.`,
        entities: [
          { name: NAMES[s.a]!, type: 'organization', description: `${NAMES[s.a]} as ${id} saw it` },
          ...(s.doomed ? [{ name: `${DOOM} thing ${id}`, type: 'thing', description: `${DOOM} thing` }] : []),
        ],
      })
      pending.push(write.then((r) => live.push(r.slug), () => undefined))
      continue
    }
    const o = observation(id, {
      title,
      content: `Remote note ${id}.`,
      entities: [
        { name: NAMES[s.a]!, type: 'organization', description: `${NAMES[s.a]} from ${id}`, queries: [] },
        { name: s.doomed ? `${DOOM} peer ${id}` : NAMES[s.b]!, type: 'thing', description: `from ${id}`, queries: [] },
      ],
      relationships: s.a !== s.b && !s.doomed ? [{ source: NAMES[s.a]!, type: 'works_with', target: NAMES[s.b]!, description: '', weight: 1 }] : [],
    })
    // a doomed change may also carry deletions and an alias, none of which may show
    const deleted = s.doomed ? live.slice(0, s.deletes) : []
    const aliases = s.alias ? new Map([...engine.committedGraph.aliasMap(), [s.doomed ? `${DOOM} alias ${id}` : `alias ${id}`, 'acme']]) : undefined
    pending.push(engine.applyRemote({ put: [o], deleted, ...(aliases ? { aliases } : {}) }).then(() => live.push(id), () => undefined))
  }
  await Promise.all(pending)
  await read(0)
  await read(1)
  await read(2)
  expect(seen).toEqual([])

  // the live graph is the derivation of what the database holds, and nothing doomed was kept
  const [observations, aliases] = await Promise.all([engine.db.observations.toArray(), engine.db.aliases.toArray()])
  expect(observations.filter((o) => o.title.startsWith(DOOM))).toEqual([])
  const derived = Graph.derive(observations, new Map(aliases.map((a) => [a.variant, a.canonical])))
  expect(graphFingerprint(engine.committedGraph)).toBe(graphFingerprint(derived))
  expect([...engine.committedGraph.aliasMap()].sort()).toEqual([...derived.aliasMap()].sort())
  await memory.close()
}

describe('reads see only committed state', () => {
  it('while remote changes and local writes commit or fail at random', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), (steps) => run(steps)),
      { numRuns: 40, seed: 0x18c0, endOnFailure: true },
    )
  }, 120_000)
})
