// Edges and entities kept up batch by batch (as a joining device applies notes) must be the very
// values a derivation of all the notes at once gives: the same bits, whatever order and batches
// the notes came in, whatever weights they give (whole units, halves, tenths).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import type { Observation } from '../../src/core/types'
import { graphFingerprint } from '../helpers/graph-fingerprint'

const NAMES = ['Ada', 'Bo', 'Cy', 'Di']
// 0.1, 0.7 and 0.3 are not whole numbers of any power of two: their sums depend on their order
const WEIGHTS = [1, 2, 0.5, 0.25, 0.1, 0.7, 0.3, 1000]
const DESCRIPTIONS = ['', '', 'met', 'works with', 'leads']

const noteArb: fc.Arbitrary<Drawn> = fc.record({
  day: fc.integer({ min: 1, max: 4 }),
  entities: fc.uniqueArray(fc.record({ name: fc.constantFrom(...NAMES), description: fc.constantFrom('', 'a person', 'a colleague') }), { minLength: 1, maxLength: 3, selector: (e) => e.name }),
  relationships: fc.array(fc.record({ source: fc.constantFrom(...NAMES), target: fc.constantFrom(...NAMES), weight: fc.constantFrom(...WEIGHTS), description: fc.constantFrom(...DESCRIPTIONS) }), { maxLength: 3 }),
})

interface Drawn {
  day: number
  entities: Array<{ name: string; description: string }>
  relationships: Array<{ source: string; target: string; weight: number; description: string }>
}

function observation(slug: string, n: Drawn): Observation {
  const at = `2026-01-0${n.day}T00:00:00.000Z`
  return {
    slug, title: slug, content: 'c', category: 'note', tags: [], observedAt: at, confidence: 1, source: '',
    entities: n.entities.map((e) => ({ name: e.name, type: 'person', description: e.description, queries: [] })),
    relationships: n.relationships.map((r) => ({ source: r.source, type: 'knows', target: r.target, description: r.description, weight: r.weight })),
    files: [], createdBy: 'x', createdAt: at, updatedAt: at,
  }
}

/** `notes` in `order`, cut into batches at `cuts`, each applied as a remote change is. */
function arriveInBatches(notes: readonly Observation[], order: readonly number[], cuts: ReadonlySet<number>): Graph {
  const g = new Graph()
  let batch: Observation[] = []
  order.forEach((i, at) => {
    batch.push(notes[i]!)
    if (cuts.has(at) || at === order.length - 1) {
      g.applyPreviewedChanges(g.previewChanges({ put: batch }))
      batch = []
    }
  })
  return g
}

describe('edges and entities kept up batch by batch', () => {
  it('equal a derivation of all the notes at once, bit for bit, in any order and batching', () => {
    fc.assert(
      fc.property(
        fc.array(noteArb, { minLength: 1, maxLength: 30 }).chain((notes) =>
          fc.tuple(fc.constant(notes), fc.shuffledSubarray(notes.map((_, i) => i), { minLength: notes.length }), fc.uniqueArray(fc.nat(notes.length), { maxLength: 6 })),
        ),
        ([drawn, order, cuts]) => {
          const notes = drawn.map((n, i) => observation(`n${String(i).padStart(2, '0')}`, n))
          const whole = graphFingerprint(Graph.derive(notes))
          expect(graphFingerprint(arriveInBatches(notes, order, new Set(cuts)))).toBe(whole)
          // one note at a time, through the single-note path a local write takes
          const single = new Graph()
          for (const i of order) single.apply(notes[i]!.slug, notes[i]!)
          expect(graphFingerprint(single)).toBe(whole)
        },
      ),
      { numRuns: 300, seed: 20261207 },
    )
  })

  it('stay equal as notes are edited and removed, a describing note among them', () => {
    fc.assert(
      fc.property(fc.array(noteArb, { minLength: 2, maxLength: 20 }), fc.array(fc.tuple(fc.nat(19), fc.option(noteArb, { nil: undefined })), { minLength: 1, maxLength: 12 }), (drawn, edits) => {
        const held = new Map(drawn.map((n, i) => [`n${i}`, observation(`n${i}`, n)]))
        const g = Graph.derive(held.values())
        for (const [at, next] of edits) {
          const slug = `n${at % drawn.length}`
          const put = next ? [observation(slug, next)] : []
          g.applyPreviewedChanges(g.previewChanges({ put, deleted: next ? [] : [slug] }))
          if (next) held.set(slug, put[0]!)
          else held.delete(slug)
          expect(graphFingerprint(g)).toBe(graphFingerprint(Graph.derive(held.values())))
        }
      }),
      { numRuns: 200, seed: 20261208 },
    )
  })

  it('sum an edge of tenths the same way whichever note arrives first', () => {
    const tenth = (slug: string, weight: number) => observation(slug, { day: 1, entities: [{ name: 'Ada', description: 'a person' }, { name: 'Bo', description: 'a person' }], relationships: [{ source: 'Ada', target: 'Bo', weight, description: '' }] })
    const notes = [tenth('a', 0.1), tenth('b', 0.2), tenth('c', 0.3)]
    const weightOf = (g: Graph) => g.relationships.get('ada\u0000knows\u0000bo')!.weight
    const whole = weightOf(Graph.derive(notes))
    // 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 differ in the last bit: the order must not show
    expect(0.1 + 0.2 + 0.3).not.toBe(0.3 + 0.2 + 0.1)
    expect(weightOf(arriveInBatches(notes, [2, 1, 0], new Set([0, 1])))).toBe(whole)
    expect(weightOf(arriveInBatches(notes, [1, 2, 0], new Set([0])))).toBe(whole)
  })
})
