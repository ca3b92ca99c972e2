// A seeded stream of writes, updates and deletes for the fault tests, and the states a memory
// may be in after it was interrupted: everything acknowledged applied, plus at most the one op
// that was in flight.
import { normalizeName } from '../../src/core/normalize'
import type { Observation } from '../../src/core/types'
import type { Ack, Op } from './page/ops'
import type { StoredState } from './page/state'

/** xorshift32: deterministic, so a failing seed reproduces. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

// distinct words, so a recall for one finds the entity it describes
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper', 'kelp', 'lagoon', 'meadow', 'nickel', 'orchid', 'pumice']

export function entityOf(n: number): { name: string; type: string; description: string } {
  return { name: `Keeper ${WORDS[n % WORDS.length]}`, type: 'person', description: `Keeper of the ${WORDS[n % WORDS.length]} archive, number ${n}` }
}

/** `count` ops: writes naming two entities of a small pool (so deletes prune only orphans), updates and deletes of live writes. */
export function makeStream(seed: number, count: number, prefix: string): Op[] {
  const rand = prng(seed)
  const pick = (n: number) => Math.floor(rand() * n)
  const ops: Op[] = []
  const live: number[] = []
  let revisions = 0
  for (let i = 0; i < count; i++) {
    const r = rand()
    if (live.length < 4 || r < 0.45) {
      const a = entityOf(pick(WORDS.length))
      const b = entityOf(pick(WORDS.length))
      const entities = a.name === b.name ? [a] : [a, b]
      ops.push({
        kind: 'write',
        input: {
          title: `${prefix} note ${i}`,
          content: `${prefix} note ${i}, first version.`,
          tags: ['faults'],
          entities,
          relationships: entities.length === 2 ? [{ source: a.name, type: 'works_with', target: b.name }] : [],
        },
      })
      live.push(i)
    } else if (r < 0.8) {
      const ref = live[pick(live.length)]!
      const added = entityOf(pick(WORDS.length))
      const first = (ops[ref] as Extract<Op, { kind: 'write' }>).input.entities![0]!
      revisions++
      ops.push({
        kind: 'update',
        ref,
        patch: {
          content: `revision ${revisions} of note ${ref}`,
          entities: [added],
          relationships: added.name === first.name ? [] : [{ source: added.name, type: 'advises', target: first.name }],
        },
      })
    } else {
      const at = pick(live.length)
      const ref = live[at]!
      live.splice(at, 1)
      ops.push({ kind: 'delete', ref })
    }
  }
  return ops
}

/** What one write's observation should look like: gone, or this content with at least these entities. */
interface Expected {
  present: boolean
  content: string
  entities: Set<string>
}

function apply(state: Map<number, Expected>, ops: Op[], i: number): void {
  const op = ops[i]!
  if (op.kind === 'write') {
    state.set(i, { present: true, content: op.input.content, entities: new Set(op.input.entities!.map((e) => normalizeName(e.name))) })
    return
  }
  const prev = state.get(op.ref)!
  if (op.kind === 'delete') state.set(op.ref, { ...prev, present: false })
  else state.set(op.ref, { present: true, content: op.patch.content!, entities: new Set([...prev.entities, ...op.patch.entities!.map((e) => normalizeName(e.name))]) })
}

function matches(o: Observation | undefined, e: Expected): boolean {
  if (!e.present) return o === undefined
  return o !== undefined && o.content === e.content && [...e.entities].every((k) => o.entities.some((x) => normalizeName(x.name) === k))
}

/**
 * Problems with `stored` given what was acknowledged. Ops are issued one after another, so what
 * a memory holds is the stream's first j ops, for some j from the acknowledged count up to
 * `maxApplied` (ops in flight may or may not have landed). Also: acknowledged writes keep their
 * slug, every observation is whole in the graph, and the rows equal a re-derivation. Empty
 * means consistent.
 */
export function checkAgainstAcks(ops: Op[], acks: Ack[], maxApplied: number, stored: StoredState): string[] {
  const problems: string[] = []
  const byTitle = new Map(stored.observations.map((o) => [o.title, o]))
  const writeOf = new Map<string, number>()
  ops.forEach((op, i) => op.kind === 'write' && writeOf.set(op.input.title, i))
  for (const o of stored.observations) if (!writeOf.has(o.title)) problems.push(`observation "${o.slug}" (${o.title}) was never written by this stream`)
  for (const a of acks) {
    const op = ops[a.index]!
    if (op.kind === 'write' && byTitle.has(op.input.title) && byTitle.get(op.input.title)!.slug !== a.slug) problems.push(`write ${a.index} was acknowledged as "${a.slug}" but is stored as "${byTitle.get(op.input.title)!.slug}"`)
  }
  const mismatches = (j: number): string[] => {
    const state = new Map<number, Expected>()
    for (let i = 0; i < j; i++) apply(state, ops, i)
    const out: string[] = []
    for (const [w, expected] of state) {
      const title = (ops[w] as Extract<Op, { kind: 'write' }>).input.title
      const o = byTitle.get(title)
      if (!matches(o, expected)) out.push(`"${title}": expected ${expected.present ? `content "${expected.content}"` : 'it deleted'}, the memory holds ${o ? `content "${o.content}"` : 'no such observation'}`)
    }
    for (const o of stored.observations) {
      const w = writeOf.get(o.title)
      if (w !== undefined && !state.has(w)) out.push(`"${o.title}" is stored, but its write is not among the first ${j} ops`)
    }
    return out
  }
  let best: string[] | undefined
  for (let j = acks.length; j <= Math.max(acks.length, maxApplied); j++) {
    const m = mismatches(j)
    if (m.length === 0) {
      best = []
      break
    }
    best ??= m.map((p) => `with all ${acks.length} acknowledged ops applied: ${p}`)
  }
  problems.push(...(best ?? []))
  const entityKeys = new Set(stored.entityKeys)
  for (const o of stored.observations) {
    for (const e of o.entities) if (!entityKeys.has(normalizeName(e.name))) problems.push(`observation "${o.slug}" names "${e.name}", which the graph lacks`)
  }
  if (stored.rows !== stored.derived) problems.push('the stored entity and relationship rows differ from a re-derivation of the stored observations')
  return problems
}
