// The incrementally maintained graph must always equal a from-scratch derivation.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { normalizeName } from '../../src/core/normalize'
import type { Observation } from '../../src/core/types'
import { packOpenState, unpackOpenState } from '../../src/store/open-state'
import { Timeline } from '../../src/core/validity'

const NAMES = ['Ada', 'ada', 'Babbage', 'Engine', 'IBM', 'International Business Machines', 'Society', 'Menabrea', 'C++', 'C#', 'C', '.NET', 'NET']
const TYPES = ['knows', 'built', 'funded']

const entityArb = fc.record({
  name: fc.constantFrom(...NAMES),
  type: fc.constantFrom('person', 'org', 'thing'),
  // '' names an entity without describing it; 'First!' gives 'first' again, as written differently
  description: fc.constantFrom('first', 'First!', 'second', 'third description', ''),
  queries: fc.array(fc.constantFrom('who?', 'what?'), { maxLength: 2 }),
})
const relArb = fc.record({
  source: fc.constantFrom(...NAMES),
  type: fc.constantFrom(...TYPES),
  target: fc.constantFrom(...NAMES),
  description: fc.constantFrom('', 'edge'),
  weight: fc.constantFrom(1, 2, 0.5),
})

/** World time: days of validity (0: none given) and the notes superseded. */
interface TimeOp {
  from: number
  to: number
  supersedes: number[]
  /** Dates on the first relationship of its own. */
  edgeTo: number
}

type Op =
  | { kind: 'put'; slug: number; entities: Observation['entities']; relationships: Observation['relationships']; day: number; time?: TimeOp }
  | { kind: 'delete'; slug: number }
  | { kind: 'alias'; variant: string; canonical: string }
  | { kind: 'unalias'; variant: string }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        kind: fc.constant('put' as const),
        slug: fc.integer({ min: 0, max: 6 }),
        entities: fc.uniqueArray(entityArb, { maxLength: 4, selector: (e) => normalizeName(e.name) }),
        relationships: fc.array(relArb, { maxLength: 4 }),
        day: fc.integer({ min: 1, max: 9 }),
        time: fc.record({ from: fc.integer({ min: 0, max: 9 }), to: fc.integer({ min: 0, max: 9 }), supersedes: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }), edgeTo: fc.integer({ min: 0, max: 9 }) }),
      },
      { requiredKeys: ['kind', 'slug', 'entities', 'relationships', 'day'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), slug: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('alias' as const), variant: fc.constantFrom(...NAMES), canonical: fc.constantFrom(...NAMES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unalias' as const), variant: fc.constantFrom(...NAMES) }) },
)

const dayOf = (d: number) => `2026-01-0${d}T00:00:00.000Z`

function observation(slug: string, op: Extract<Op, { kind: 'put' }>, n: number): Observation {
  const t = dayOf(op.day)
  const o: Observation = { slug, title: slug, content: 'c', category: 'note', tags: [], observedAt: t, confidence: 1, source: '', entities: op.entities, relationships: op.relationships, files: [], createdBy: 'x', createdAt: t, updatedAt: `2026-02-01T00:00:${String(n % 60).padStart(2, '0')}.000Z` }
  const time = op.time
  if (!time) return o
  // as a write stores them: an interval's end after its start, no note superseding itself
  if (time.from) o.validFrom = dayOf(time.from)
  if (time.to && (!time.from || time.to > time.from)) o.validTo = dayOf(time.to)
  const supersedes = time.supersedes.map((s) => `s${s}`).filter((s) => s !== slug)
  if (supersedes.length) o.supersedes = supersedes
  if (time.edgeTo && o.relationships.length) o.relationships = [{ ...o.relationships[0]!, validTo: dayOf(time.edgeTo) }, ...o.relationships.slice(1)]
  return o
}

/** Each note's interval as a timeline derives it: comparable across timelines. */
function timesOf(t: Timeline, slugs: Iterable<string>): unknown {
  return [...slugs].sort().map((slug) => [slug, t.has(slug), t.interval(slug) ?? null, t.datedEdges(slug)])
}

describe('incremental derivation', () => {
  it('equals derivation from scratch after any sequence of puts, deletes and alias changes, applied directly or previewed first, also when read back from its rows', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
        let g = new Graph()
        const obs = new Map<string, Observation>()
        let aliases = new Map<string, string>()
        // world time kept in step with the notes, as the engine keeps it
        const timeline = new Timeline((slug) => obs.get(slug))
        // every other change goes the engine's way: previewed (leaving the graph as it was), then applied
        const change = (slug: string, o: Observation | undefined, n: number) => {
          if (n % 2 === 0) return void g.apply(slug, o)
          const before = graphFingerprint(g)
          const delta = g.preview(slug, o)
          expect(graphFingerprint(g)).toBe(before)
          g.applyPreviewed(slug, o, delta)
        }
        ops.forEach((op, n) => {
          // now and then the graph is read back from its own rows, as an open does, with some
          // or none of its notes filed before the next change
          if (n % 5 === 3) {
            if (n % 10 === 3) {
              g = Graph.fromRows(g.allObservations(), g.aliasMap(), [...g.entities.values()], [...g.relationships.values()])
            } else {
              // through the open state as it is saved and read back: observations as text, the graph as columns
              // in parts of a note or two, so that a note's place in its part is not its place in the save
              // with the keys that were not live, taken from a graph that may itself be only partly filed
              const saved = structuredClone(packOpenState('s', 1, 'r', g.observationTexts(), g.entities.values(), g.relationships.values(), 400, g.dormantBacking()))!
              const state = unpackOpenState(saved.state, 1, 'r')!
              expect(state.dormant).toBeDefined()
              g = Graph.fromRows(state.observations!, g.aliasMap(), state.entities, state.relationships, state.noteEntities, state.dormant)
              // before any text is in, each note backs what it backs in a derivation (from the saved columns)
              const derived = Graph.derive(obs.values(), aliases)
              for (const slug of obs.keys()) expect(g.entitiesOf(slug).sort()).toEqual(derived.entitiesOf(slug).sort())
              // the texts come in after the open: some notes first from their rows (a recall's), then the rest
              g.takeInNotes(state.slugs!.filter((_, i) => (i + n) % 2 === 0).map((slug) => obs.get(slug)!))
              for (const part of saved.texts) g.takeInNotePart(part.from, state.slugs!.slice(part.from, part.from + part.ends.length), part.text, part.ends)
              expect(g.notesInStorage).toBe(0)
              // and once their texts are in, before any is parsed
              for (const slug of obs.keys()) expect(g.entitiesOf(slug).sort()).toEqual(derived.entitiesOf(slug).sort())
            }
            g.fileSome(n % 3)
            // reads answer the same before the rest is filed (a recall right after an open); every
            // other time, not before the change, which then meets notes not parsed since the open
            if (n % 10 !== 8) expect(reads(g)).toEqual(reads(Graph.derive(obs.values(), aliases)))
          }
          if (op.kind === 'put') {
            const o = observation(`s${op.slug}`, op, n)
            obs.set(o.slug, o)
            change(o.slug, o, n)
            timeline.put(o)
          } else if (op.kind === 'delete') {
            obs.delete(`s${op.slug}`)
            change(`s${op.slug}`, undefined, n)
            timeline.delete(`s${op.slug}`)
          } else {
            const v = normalizeName(op.variant)
            const next = new Map(aliases)
            if (op.kind === 'unalias') next.delete(v)
            else {
              const c = normalizeName(op.canonical)
              // flat alias maps only, as consolidation writes them: no chains, no self-maps
              if (v === c || next.has(c) || [...next.values()].includes(v)) return
              next.set(v, c)
            }
            aliases = next
            g.setAliases(aliases)
          }
          const fresh = Graph.derive(obs.values(), aliases)
          // a change files only what it touches: each note still backs what a derivation says, and
          // the keys that are not live are those of a derivation, with the same notes
          for (const slug of obs.keys()) expect(g.entitiesOf(slug).sort()).toEqual(fresh.entitiesOf(slug).sort())
          expect(dormantOf(g)).toEqual(dormantOf(fresh))
          expect(graphFingerprint(g)).toBe(graphFingerprint(fresh))
          // a restored graph keeps its saved edges beside the changes: the count must still add up
          expect(g.relationships.size).toBe(fresh.relationships.size)
          expect(reads(g)).toEqual(reads(fresh))
          expect(timesOf(timeline, obs.keys())).toEqual(timesOf(Timeline.of(obs.values(), (slug) => obs.get(slug)), obs.keys()))
        })
        // invariants: degrees count live edges; no self-loops; edges only between live entities
        for (const e of g.entities.values()) {
          const live = [...g.relationships.values()].filter((r) => r.source === e.key || r.target === e.key).length
          expect(e.degree).toBe(live)
        }
        for (const r of g.relationships.values()) {
          expect(r.source).not.toBe(r.target)
          expect(g.entities.has(r.source) && g.entities.has(r.target)).toBe(true)
        }
      }),
      { numRuns: 300, seed: 20261203 },
    )
    // 300 seeded runs take a few seconds alone and more beside other test files
  }, 60_000)

  it('a batch previewed leaves the graph as it was, and applied (or dropped, as a failed commit is) equals derivation from scratch', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ ops: fc.array(opArb, { minLength: 1, maxLength: 6 }), dropped: fc.boolean() }), { minLength: 1, maxLength: 12 }), (batches) => {
        const g = new Graph()
        const obs = new Map<string, Observation>()
        let aliases = new Map<string, string>()
        let n = 0
        for (const { ops, dropped } of batches) {
          // a batch as a remote change carries it: puts, then deletions, then the alias map now in force
          const put: Observation[] = []
          const deleted: string[] = []
          let nextAliases: Map<string, string> | undefined
          for (const op of ops) {
            n++
            if (op.kind === 'put') put.push(observation(`s${op.slug}`, op, n))
            else if (op.kind === 'delete') deleted.push(`s${op.slug}`)
            else {
              const next = new Map(nextAliases ?? aliases)
              const v = normalizeName(op.variant)
              if (op.kind === 'unalias') next.delete(v)
              else {
                const c = normalizeName(op.canonical)
                if (v === c || next.has(c) || [...next.values()].includes(v)) continue
                next.set(v, c)
              }
              nextAliases = next
            }
          }
          const before = graphFingerprint(g)
          const readsBefore = reads(g)
          const previewed = g.previewChanges({ put, deleted, ...(nextAliases ? { aliases: nextAliases } : {}) })
          // until it is applied, every read answers as before: entities, edges by end, notes, aliases
          expect(graphFingerprint(g)).toBe(before)
          expect(reads(g)).toEqual(readsBefore)
          if (!dropped) {
            g.applyPreviewedChanges(previewed)
            for (const o of put) obs.set(o.slug, o)
            for (const slug of deleted) obs.delete(slug)
            if (nextAliases) aliases = nextAliases
          } else {
            g.discardPreviewedChanges(previewed)
            expect(reads(g)).toEqual(readsBefore)
          }
          const fresh = Graph.derive(obs.values(), aliases)
          expect(graphFingerprint(g)).toBe(graphFingerprint(fresh))
          for (const k of fresh.entities.keys()) expect(g.edgesOf(k)).toEqual(fresh.edgesOf(k))
        }
      }),
      { numRuns: 300, seed: 20261204 },
    )
  }, 60_000)

  it('world time depends only on the set of notes: any arrival order gives the same intervals', () => {
    const putArb = opArb.filter((op): op is Extract<Op, { kind: 'put' }> => op.kind === 'put')
    fc.assert(
      fc.property(fc.array(putArb, { minLength: 1, maxLength: 12 }), fc.func(fc.integer()), (puts, key) => {
        // one version of each note, as two devices hold once synced
        const notes = new Map<string, Observation>()
        puts.forEach((op, n) => notes.set(`s${op.slug}`, observation(`s${op.slug}`, op, n)))
        const one = [...notes.values()]
        const other = [...one].sort((a, b) => key(a.slug) - key(b.slug) || (a.slug < b.slug ? 1 : -1))
        const arrive = (order: Observation[]) => {
          const held = new Map<string, Observation>()
          const t = new Timeline((slug) => held.get(slug))
          for (const o of order) {
            held.set(o.slug, o)
            t.put(o)
          }
          return t
        }
        expect(timesOf(arrive(other), notes.keys())).toEqual(timesOf(arrive(one), notes.keys()))
      }),
      { numRuns: 300, seed: 20261207 },
    )
  })

  it('a returned delta does not change when the graph moves on', () => {
    const g = new Graph()
    const put = (slug: string, rels: Observation['relationships']): Observation => ({ slug, title: slug, content: '', category: 'note', tags: [], observedAt: '2026-01-01T00:00:00.000Z', confidence: 1, source: '', entities: [{ name: 'A', type: 't', description: 'a', queries: [] }, { name: 'B', type: 't', description: 'b', queries: [] }], relationships: rels, files: [], createdBy: 'x', createdAt: '', updatedAt: '' })
    g.apply('one', put('one', []))
    const delta = g.apply('two', put('two', [{ source: 'A', type: 'knows', target: 'B', description: '', weight: 1 }]))
    const degreeA = delta.upsertedEntities.find((e) => e.key === 'a')!.degree
    g.apply('two', undefined)
    expect(degreeA).toBe(1)
    expect(g.entities.get('a')!.degree).toBe(0)
  })
})

/** What readers of a graph can see, in a comparable form. */
function dormantOf(g: Graph): unknown {
  const { entities, edges } = g.dormantBacking()
  return {
    entities: [...entities].map(([k, list]) => [k, [...list].sort()]).sort(),
    edges: [...edges].map(([k, r]) => [k, r.source, r.type, r.target, [...r.observations].sort()]).sort(),
  }
}

function reads(g: Graph): unknown {
  const slugs = [...g.allObservations()].map((o) => o.slug).sort()
  return {
    observations: slugs.map((slug) => [slug, g.getObservation(slug)!.title, g.entitiesOf(slug).sort()]),
    aliases: [...g.aliasMap()].sort(),
    edges: [...g.entities.keys()].sort().map((k) => [k, g.edgesOf(k).map((r) => r.key)]),
  }
}
