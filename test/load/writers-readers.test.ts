// Four writers and four readers share one memory for a few seconds. Afterwards every write that
// was acknowledged is there as written, nothing else is, and the stored entity and relationship
// rows are exactly what re-deriving them from the stored observations gives.
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import type { Memory } from '../../src/index'
import { fixture } from '../engine/fixture'
import { readDerived } from '../helpers/read-derived'
import { engineOf } from '../../src/internals'

const RUN_MS = 4_000
const SHARED = ['Ada Lovelace', 'Analytical Engine', 'Royal Society', 'Charles Babbage', 'Difference Engine', 'London']

interface Acked {
  slug: string
  title: string
  content: string
}

function sortRows<T extends { key: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

async function expectRowsRederive(memory: Memory): Promise<void> {
  const db = engineOf(memory).db
  const [obs, aliases, { entities, relationships }] = await Promise.all([db.observations.toArray(), db.aliases.toArray(), readDerived(db)])
  const fresh = Graph.derive(obs, new Map(aliases.map((a) => [a.variant, a.canonical])))
  expect(graphFingerprint(engineOf(memory).committedGraph)).toBe(graphFingerprint(fresh))
  expect(JSON.stringify(sortRows(entities))).toBe(JSON.stringify(sortRows([...fresh.entities.values()])))
  expect(JSON.stringify(sortRows(relationships))).toBe(JSON.stringify(sortRows([...fresh.relationships.values()])))
}

describe('concurrent writers and readers', () => {
  it('loses no acknowledged write and keeps stored rows equal to a re-derivation', async () => {
    const f = await fixture()
    const deadline = Date.now() + RUN_MS
    const acked = new Map<string, Acked>()
    const failures: unknown[] = []
    let reads = 0

    const writer = async (w: number): Promise<void> => {
      const conn = await f.memory.connect({ agent: `writer-${w}`, tier: 'full' })
      for (let i = 0; Date.now() < deadline; i++) {
        // shared entity names make writers merge into, and contend on, the same graph rows
        const a = SHARED[(w + i) % SHARED.length]!
        const b = SHARED[(w * 3 + i + 1) % SHARED.length]!
        const own = `Topic ${w}-${i}`
        const note = { title: `w${w} note ${i}`, content: `writer ${w} wrote note ${i} about ${a} and ${own}` }
        try {
          const { slug } = await conn.write({
            ...note,
            entities: [
              { name: a, type: 'thing', description: `${a} as writer ${w} saw it in note ${i}` },
              { name: own, type: 'topic', description: `Topic number ${i} of writer ${w}` },
              ...(a === b ? [] : [{ name: b, description: `${b}, mentioned by writer ${w}` }]),
            ],
            relationships: [{ source: own, type: 'about', target: a }, ...(a === b ? [] : [{ source: a, type: 'related_to', target: b }])],
          })
          acked.set(slug, { slug, ...note })
          // now and then edit an earlier note of this writer: the acknowledged edit must stick
          if (i % 5 === 4) {
            const mine = [...acked.values()].filter((x) => x.title.startsWith(`w${w} `) || x.title.startsWith(`edited w${w} `))
            const target = mine[i % mine.length]!
            const title = `edited w${w} ${i}`
            await conn.update(target.slug, { title })
            acked.set(target.slug, { ...target, title })
          }
        } catch (err) {
          failures.push(err)
        }
      }
    }

    const reader = async (r: number): Promise<void> => {
      const conn = await f.memory.connect({ agent: `reader-${r}`, tier: 'read' })
      while (Date.now() < deadline) {
        try {
          const res = await conn.recall(r % 2 ? { query: SHARED[reads % SHARED.length]! } : { entity: SHARED[r]! })
          expect(res).toBeDefined()
          reads++
        } catch (err) {
          failures.push(err)
        }
        // recall over the in-memory graph resolves in microtasks; yield so storage I/O can run
        await new Promise((resolve) => setImmediate(resolve))
      }
    }

    await Promise.all([0, 1, 2, 3].map(writer).concat([0, 1, 2, 3].map(reader)))
    console.info(`load: ${acked.size} acknowledged observations, ${reads} recalls, ${failures.length} failures in ${RUN_MS} ms`)
    expect(failures).toEqual([])
    expect(acked.size).toBeGreaterThan(20)
    expect(reads).toBeGreaterThan(20)

    const check = async (memory: Memory): Promise<void> => {
      const conn = await memory.connect({ agent: 'auditor', tier: 'read' })
      for (const a of acked.values()) {
        const o = await conn.getObservation(a.slug)
        expect({ title: o.title, content: o.content }).toEqual({ title: a.title, content: a.content })
      }
      // nothing unacknowledged slipped in, nothing acknowledged dropped
      expect((await engineOf(memory).db.observations.toArray()).map((o) => o.slug).sort()).toEqual([...acked.keys()].sort())
      await expectRowsRederive(memory)
    }
    await check(f.memory)
    // and it is all on disk, not just in memory
    await f.memory.close()
    const reopened = await f.reopen()
    await check(reopened)
    await reopened.close()
  }, 30_000)
})
