// Through the whole engine: after random writes, updates, deletes and merges, the live graph,
// the derived rows in IndexedDB and a from-scratch derivation of the stored observations agree.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { fixture } from './fixture'
import { readDerived } from '../helpers/read-derived'
import { engineOf } from '../../src/internals'

const NAMES = ['Jane Doe', 'Dr. Jane Doe', 'ACME Corp', 'Acme Corporation', 'IBM', 'International Business Machines', 'Paris', 'C++', 'C#', 'C']

const entity = fc.record({ name: fc.constantFrom(...NAMES), type: fc.constantFrom('person', 'organization'), description: fc.constantFrom('a company that makes things', 'A company that makes things.', 'a person who knows things', 'a city', '') })
type Step =
  | { op: 'write'; entities: Array<{ name: string; type: string; description: string }>; link: boolean }
  | { op: 'update'; pick: number; entities: Array<{ name: string; type: string; description: string }>; remove: boolean }
  | { op: 'delete'; pick: number }
  | { op: 'merge'; pick: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), entities: fc.uniqueArray(entity, { minLength: 1, maxLength: 3, selector: (e) => e.name.toLowerCase() }), link: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('update' as const), pick: fc.nat(), entities: fc.uniqueArray(entity, { maxLength: 2, selector: (e) => e.name.toLowerCase() }), remove: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('merge' as const), pick: fc.nat() }) },
)

function sortRows<T extends { key: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.key < b.key ? -1 : 1))
}

describe('engine derivation', () => {
  it('live graph = stored derived rows = derivation from stored observations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const { conn, memory, reopen } = await fixture()
        const slugs: string[] = []
        for (const s of steps) {
          if (s.op === 'write') {
            const rels = s.link && s.entities.length > 1 ? [{ source: s.entities[0]!.name, type: 'related_to', target: s.entities[1]!.name }] : []
            const r = await conn.write({ title: 'obs', content: 'c', entities: s.entities, relationships: rels }).catch(() => undefined)
            if (r) slugs.push(r.slug)
          } else if (s.op === 'update' && slugs.length) {
            const slug = slugs[s.pick % slugs.length]!
            const current = await conn.getObservation(slug)
            await conn.update(slug, { entities: s.entities, ...(s.remove && current.entities[0] ? { removeEntities: [current.entities[0].name] } : {}) }).catch(() => undefined)
          } else if (s.op === 'delete' && slugs.length) {
            const [slug] = slugs.splice(s.pick % slugs.length, 1)
            await conn.delete(slug!)
          } else if (s.op === 'merge') {
            const proposals = await conn.consolidate()
            if (proposals.length) await conn.acceptProposal(proposals[s.pick % proposals.length]!.id)
          }
        }
        const live = engineOf(memory).committedGraph
        const db = engineOf(memory).db
        const [obs, aliases, { entities, relationships }] = await Promise.all([db.observations.toArray(), db.aliases.toArray(), readDerived(db)])
        const fresh = Graph.derive(obs, new Map(aliases.map((a) => [a.variant, a.canonical])))
        expect(graphFingerprint(live)).toBe(graphFingerprint(fresh))
        expect(JSON.stringify(sortRows(entities))).toBe(JSON.stringify(sortRows([...fresh.entities.values()])))
        expect(JSON.stringify(sortRows(relationships))).toBe(JSON.stringify(sortRows([...fresh.relationships.values()])))
        // recall, notes ranked by the note index, is the same from the memory reopened from storage
        const asked = (c: typeof conn) => c.recall({ query: 'company things' }).then((r) => [r.entities.map((e) => e.name), r.observations.map((o) => o.slug)])
        const before = await asked(conn)
        await memory.close()
        const reopened = await reopen()
        expect(await asked(await reopened.connect({ agent: 'check' }))).toEqual(before)
        await reopened.close()
      }),
      { numRuns: 40, seed: 42 },
    )
  }, 120_000)
})
