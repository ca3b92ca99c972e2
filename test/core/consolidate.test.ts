import { describe, expect, it } from 'vitest'
import {
  MERGE_THRESHOLD,
  applyMergeToAliases,
  chooseCanonical,
  collapseAliases,
  fnv1a64,
  namesMayMerge,
  pairId,
  proposeMerges,
  resolveAlias,
} from '../../src/core/consolidate'
import { isMemoryError } from '../../src/core/errors'
import { normalizeName, relationshipKey } from '../../src/core/normalize'
import type { Entity, MergeProposal, Relationship } from '../../src/core/types'

function entity(name: string, type = 'thing', description = 'something', extra: Partial<Entity> = {}): Entity {
  return { key: normalizeName(name), name, type, description, descriptions: [], queries: [], degree: 0, observations: ['o1'], ...extra }
}

function edge(source: string, type: string, target: string): Relationship {
  const s = normalizeName(source)
  const t = normalizeName(target)
  return { key: relationshipKey(s, type, t), source: s, type, target: t, description: '', weight: 1, observations: ['o1'] }
}

function propose(entities: Entity[], relationships: Relationship[] = [], rejected: ReadonlySet<string> = new Set(), limit?: number): MergeProposal[] {
  return proposeMerges({ entities, relationships, rejected, now: '2024-05-01T00:00:00.000Z', ...(limit === undefined ? {} : { limit }) })
}

const pairOf = (a: string, b: string): string => [normalizeName(a), normalizeName(b)].sort().join(' + ')
const pairs = (ps: MergeProposal[]): string[] => ps.map((p) => p.pair.join(' + '))
const find = (ps: MergeProposal[], a: string, b: string): MergeProposal | undefined => ps.find((p) => p.pair.join(' + ') === pairOf(a, b))

// A small store with the variants the brief names and the look-alikes that must stay apart.
const store: Entity[] = [
  entity('ACME Corp.', 'organization', 'maker of anvils and rockets'),
  entity('Acme Corporation', 'organization', 'anvil manufacturer'),
  entity('International Business Machines', 'organization', 'American computer company'),
  entity('IBM', 'organization', 'computer company from Armonk'),
  entity('Dr. Jane Doe', 'person', 'surgeon at the city hospital'),
  entity('Jane Doe', 'person', 'surgeon at city hospital'),
  entity('Java', 'language', 'programming language for the JVM'),
  entity('JavaScript', 'language', 'programming language for the web'),
  entity('Paris', 'city', 'capital of France'),
  entity('Paris Hilton', 'person', 'media personality and heiress'),
  entity('John Smith', 'person', 'engineer at Acme'),
  entity('Jane Smith', 'person', 'engineer at Acme'),
  entity('Apple', 'organization', 'maker of the iPhone'),
  entity('Apple pie', 'food', 'a baked dessert'),
]

describe('proposeMerges: variants are proposed', () => {
  const ps = propose(store)

  it('proposes Acme Corporation against ACME Corp. (which is the same entity as acme corp)', () => {
    expect(normalizeName('ACME Corp.')).toBe(normalizeName('acme corp'))
    const p = find(ps, 'ACME Corp.', 'Acme Corporation')!
    expect(p).toBeDefined()
    expect(p.evidence[0]!.signal).toBe('title_or_suffix')
    expect(p.status).toBe('open')
    expect(p.kind).toBe('merge')
    expect(p.createdAt).toBe('2024-05-01T00:00:00.000Z')
  })

  it('proposes an acronym with its expansion, suggesting the complete name when degrees tie', () => {
    const p = find(ps, 'IBM', 'International Business Machines')!
    expect(p.evidence.map((e) => e.signal)).toContain('acronym')
    expect(p.canonical).toBe('international business machines')
    expect(p.names).toEqual(['IBM', 'International Business Machines'])
  })

  it('proposes a name with and without a title, and a reordered name', () => {
    expect(find(ps, 'Dr. Jane Doe', 'Jane Doe')!.evidence.map((e) => e.signal)).toEqual(['title_or_suffix', 'similar_description'])
    const reordered = propose([entity('Doe, Jane', 'person', 'a surgeon'), entity('Jane Doe', 'person', 'surgeon')])
    expect(pairs(reordered)).toEqual([pairOf('Doe, Jane', 'Jane Doe')])
    expect(reordered[0]!.evidence[0]!.signal).toBe('token_reorder')
    expect(reordered[0]!.canonical).toBe('jane doe') // less punctuation when all else ties
  })

  it('proposes a typo in a long name', () => {
    const p = propose([entity('Kubernetes', 'software', 'container orchestration'), entity('Kubernetis', 'software', 'cluster scheduler')])
    expect(p.map((x) => x.evidence[0]!.signal)).toEqual(['edit_distance'])
  })

  it('keeps every score in [threshold, 1] and sorts by score, then id', () => {
    expect(ps.length).toBeGreaterThan(0)
    for (const p of ps) {
      expect(p.score).toBeGreaterThanOrEqual(MERGE_THRESHOLD)
      expect(p.score).toBeLessThanOrEqual(1)
      expect(p.pair[0] < p.pair[1]).toBe(true)
      expect(p.pair).toContain(p.canonical)
      expect(p.id).toBe(pairId(p.pair[1], p.pair[0]))
    }
    for (let i = 1; i < ps.length; i++) {
      const [a, b] = [ps[i - 1]!, ps[i]!]
      expect(a.score > b.score || (a.score === b.score && a.id < b.id)).toBe(true)
    }
  })
})

describe('proposeMerges: look-alikes are not proposed', () => {
  it('leaves Java/JavaScript, Paris/Paris Hilton, John/Jane Smith and Apple/Apple pie alone', () => {
    const ps = propose(store)
    for (const [a, b] of [['Java', 'JavaScript'], ['Paris', 'Paris Hilton'], ['John Smith', 'Jane Smith'], ['Apple', 'Apple pie']] as const) {
      expect(find(ps, a, b), `${a} / ${b}`).toBeUndefined()
    }
    expect(pairs(ps).sort()).toEqual([pairOf('ACME Corp.', 'Acme Corporation'), pairOf('Dr. Jane Doe', 'Jane Doe'), pairOf('IBM', 'International Business Machines')].sort())
  })

  it('does not merge two people with one surname even when descriptions and neighbors agree', () => {
    const people = [entity('John Smith', 'person', 'engineer at Acme'), entity('Jane Smith', 'person', 'engineer at Acme'), entity('Acme', 'organization', 'a company')]
    const ps = propose(people, [edge('John Smith', 'works_for', 'Acme'), edge('Jane Smith', 'works_for', 'Acme')])
    expect(ps).toEqual([])
  })

  it('does not merge Java and JavaScript even with identical descriptions', () => {
    const ps = propose([entity('Java', 'language', 'a programming language'), entity('JavaScript', 'language', 'a programming language')])
    expect(ps).toEqual([])
  })

  it('keeps weak name evidence alone below the threshold', () => {
    expect(propose([entity('Dr. Smith', 'person', 'dentist'), entity('Smith', 'person', 'baker')])).toEqual([])
    expect(propose([entity('BA', 'organization', 'airline'), entity('Bank of America', 'organization', 'bank')])).toEqual([])
    expect(propose([entity('Mr. Smith', 'person', 'neighbor'), entity('Mrs. Smith', 'person', 'neighbor')])).toEqual([])
  })
})

describe('proposeMerges: evidence beyond names', () => {
  const base = [entity('Kubernetes', 'software', 'container orchestration platform'), entity('Kubernetis', 'software', 'open source system')]
  const hubs = ['Docker', 'Helm', 'Google'].map((n) => entity(n, 'software', `${n} tool`))
  const baseScore = propose([...base, ...hubs])[0]!.score

  it('shared neighbors raise the score', () => {
    const rels = ['Docker', 'Helm', 'Google'].flatMap((h) => [edge('Kubernetes', 'uses', h), edge('Kubernetis', 'uses', h)])
    const p = propose([...base, ...hubs], rels)[0]!
    expect(p.score).toBeGreaterThan(baseScore)
    const shared = p.evidence.find((e) => e.signal === 'shared_neighbors')!
    expect(shared.detail).toContain('3 shared neighbors')
  })

  it('a near-identical description raises the score', () => {
    const same = [base[0]!, { ...base[1]!, description: 'Container orchestration platform.' }]
    const p = propose([...same, ...hubs])[0]!
    expect(p.score).toBeGreaterThan(baseScore)
    expect(p.evidence.find((e) => e.signal === 'similar_description')!.weight).toBeCloseTo(0.5, 2)
  })

  it('an edge between the pair is not a shared neighbor', () => {
    const p = propose(base, [edge('Kubernetes', 'related_to', 'Kubernetis')])[0]!
    expect(p.evidence.map((e) => e.signal)).toEqual(['edit_distance'])
  })

  it('finds unrelated-looking names through description and neighbors together', () => {
    const es = [
      entity('Big Blue', 'organization', 'multinational technology corporation headquartered in Armonk New York'),
      entity('IBM', 'organization', 'multinational technology corporation headquartered in Armonk, New York'),
      entity('Watson', 'product', 'question answering system'),
      entity('Deep Blue', 'product', 'chess computer'),
      entity('Red Hat', 'organization', 'open source software company'),
    ]
    const rels = ['Watson', 'Deep Blue', 'Red Hat'].flatMap((n) => [edge(n, 'made_by', 'Big Blue'), edge(n, 'made_by', 'IBM')])
    const ps = propose(es, rels)
    expect(pairs(ps)).toEqual([pairOf('Big Blue', 'IBM')])
    expect(ps[0]!.evidence.map((e) => e.signal).sort()).toEqual(['shared_neighbors', 'similar_description'])
    // description alone is not enough
    expect(propose(es)).toEqual([])
  })

  it('different explicit types lower the score', () => {
    const same = propose([entity('Kubernetes', 'software', 'a'), entity('Kubernetis', 'software', 'b')])
    const different = propose([entity('Kubernetes', 'software', 'a'), entity('Kubernetis', 'band', 'b')])
    expect(same).toHaveLength(1)
    expect(different).toEqual([])
    // the default type agrees with any type
    expect(propose([entity('Kubernetes', 'software', 'a'), entity('Kubernetis', 'thing', 'b')])).toHaveLength(1)
  })
})

describe('proposeMerges: ids, order, rejection, limits', () => {
  it('gives the same output for the same input in any order', () => {
    const rels = [edge('IBM', 'owns', 'Red Hat'), edge('International Business Machines', 'owns', 'Red Hat')]
    const es = [...store, entity('Red Hat', 'organization', 'software')]
    const a = propose(es, rels)
    const shuffled = [...es].reverse()
    shuffled.push(shuffled.shift()!)
    const b = propose(shuffled, [...rels].reverse())
    expect(b).toEqual(a)
  })

  it('pairId is deterministic, order-free and distinct per pair', () => {
    expect(pairId('ibm', 'international business machines')).toBe(pairId('international business machines', 'ibm'))
    expect(pairId('a', 'b')).not.toBe(pairId('a', 'c'))
    expect(pairId('a b', 'c')).not.toBe(pairId('a', 'b c')) // the separator keeps boundaries
    expect(pairId('a', 'b')).toMatch(/^merge:[0-9a-f]{16}$/)
    // FNV-1a 64 reference values
    expect(fnv1a64('')).toBe('cbf29ce484222325')
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c')
    expect(fnv1a64('foobar')).toBe('85944171f73967e8')
  })

  it('does not propose a rejected pair again', () => {
    const first = propose(store)
    const rejectedId = find(first, 'IBM', 'International Business Machines')!.id
    const again = propose(store, [], new Set([rejectedId]))
    expect(again.map((p) => p.id)).not.toContain(rejectedId)
    expect(again).toHaveLength(first.length - 1)
  })

  it('honours the limit, keeping the best', () => {
    const all = propose(store)
    expect(propose(store, [], new Set(), 1)).toEqual(all.slice(0, 1))
    expect(propose(store, [], new Set(), 0)).toEqual([])
  })
})

describe('chooseCanonical', () => {
  const ibm = entity('IBM', 'organization', 'x')
  const full = entity('International Business Machines', 'organization', 'x')

  it('prefers more edges, then more observations, then the more complete name', () => {
    expect(chooseCanonical(ibm, full)).toBe(full)
    expect(chooseCanonical(full, ibm)).toBe(full)
    expect(chooseCanonical({ ...ibm, degree: 3 }, full).name).toBe('IBM')
    expect(chooseCanonical({ ...ibm, observations: ['o1', 'o2'] }, full).name).toBe('IBM')
    expect(chooseCanonical(entity('Jane Doe'), entity('Dr. Jane Doe')).name).toBe('Dr. Jane Doe')
  })
})

describe('alias maps', () => {
  const expectConflict = (fn: () => unknown): void => {
    try {
      fn()
    } catch (e) {
      expect(isMemoryError(e) && e.code).toBe('conflict')
      return
    }
    throw new Error('expected a conflict')
  }

  it('adds the variant and collapses chains onto the new canonical', () => {
    const start = new Map([['i.b.m', 'ibm']])
    const next = applyMergeToAliases(start, 'ibm', 'international business machines')
    expect(Object.fromEntries(next)).toEqual({ 'i.b.m': 'international business machines', ibm: 'international business machines' })
    expect(Object.fromEntries(start)).toEqual({ 'i.b.m': 'ibm' }) // input untouched
  })

  it('merging into a key that is already a variant lands on its canonical', () => {
    const next = applyMergeToAliases(new Map([['ibm', 'international business machines']]), 'big blue', 'ibm')
    expect(next.get('big blue')).toBe('international business machines')
  })

  it('repeating a merge is a no-op', () => {
    const once = applyMergeToAliases(new Map(), 'ibm', 'international business machines')
    expect(applyMergeToAliases(once, 'ibm', 'international business machines')).toEqual(once)
  })

  it('refuses to merge A into B after B into A, and to move a merged variant', () => {
    const once = applyMergeToAliases(new Map(), 'b', 'a')
    expectConflict(() => applyMergeToAliases(once, 'a', 'b'))
    expectConflict(() => applyMergeToAliases(once, 'b', 'c'))
    expect(() => applyMergeToAliases(once, 'a', 'a')).toThrow(/itself/)
  })

  it('never leaves a chain or a self-map after any sequence of merges', () => {
    let aliases = new Map<string, string>()
    const keys = ['a', 'b', 'c', 'd', 'e', 'f']
    // a fixed pseudo-random sequence, so failures reproduce
    let seed = 7
    const next = (): string => keys[Math.floor(((seed = (seed * 48271) % 2147483647) / 2147483647) * keys.length)]!
    let refused = 0
    for (let i = 0; i < 300; i++) {
      const [v, c] = [next(), next()]
      if (v === c) continue
      const bothLive = !aliases.has(v) && !aliases.has(c)
      try {
        aliases = applyMergeToAliases(aliases, v, c)
      } catch (e) {
        // merging two live entities always works; only stale requests are refused
        expect(bothLive).toBe(false)
        expect(isMemoryError(e) && e.code).toBe('conflict')
        refused++
      }
      for (const [k, target] of aliases) {
        expect(target).not.toBe(k)
        expect(aliases.has(target)).toBe(false)
      }
    }
    expect(refused).toBeGreaterThan(0)
    expect(aliases.size).toBe(keys.length - 1) // everything ended up merged into one survivor
  })

  it('resolveAlias follows chains and breaks loops at the smallest key', () => {
    expect(resolveAlias(new Map([['a', 'b'], ['b', 'c']]), 'a')).toBe('c')
    expect(resolveAlias(new Map(), 'x')).toBe('x')
    const loop = new Map([['b', 'c'], ['c', 'b'], ['z', 'c']])
    expect(resolveAlias(loop, 'z')).toBe('b')
    expect(resolveAlias(loop, 'c')).toBe('b')
    expect(Object.fromEntries(collapseAliases(loop))).toEqual({ c: 'b', z: 'b' })
  })
})

describe('scale', () => {
  it('handles 10k entities without comparing all pairs', () => {
    const first = ['Alice', 'Bruno', 'Chen', 'Dana', 'Emeka', 'Farah', 'Goran', 'Hana', 'Ivan', 'Jun']
    const last = ['Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Silva', 'Kowalski', 'Haddad', 'Novak', 'Reyes', 'Schmidt']
    const topics = ['storage', 'network', 'billing', 'search', 'mobile', 'payments', 'identity', 'analytics', 'email', 'video']
    const entities: Entity[] = []
    const relationships: Relationship[] = []
    for (let i = 0; i < 10_000; i++) {
      const kind = i % 3
      const name =
        kind === 0 ? `${first[i % 10]} ${last[Math.floor(i / 10) % 10]} ${i}` : kind === 1 ? `Project ${topics[i % 10]} ${i}` : `Vendor${i} Systems Ltd`
      const type = kind === 0 ? 'person' : kind === 1 ? 'project' : 'organization'
      entities.push(entity(name, type, `works on ${topics[i % 10]} for team ${i % 97} in region ${i % 13}`, { degree: i % 5 }))
      if (i > 0) relationships.push(edge(name, 'related_to', entities[(i * 7919) % i]!.name))
    }
    // planted variants
    entities.push(entity('Vendor2 Systems Corporation', 'organization', 'supplier'), entity('Okafor, Alice 0', 'person', 'x'))
    const t = performance.now()
    const ps = proposeMerges({ entities, relationships, rejected: new Set(), now: '2024-05-01T00:00:00.000Z' })
    const ms = performance.now() - t
    console.log(`proposeMerges over ${entities.length} entities, ${relationships.length} relationships: ${ms.toFixed(0)} ms, ${ps.length} proposals`)
    // only the planted pairs: the synthetic names share words and descriptions but are distinct
    expect(pairs(ps).sort()).toEqual([pairOf('Alice Okafor 0', 'Okafor, Alice 0'), pairOf('Vendor2 Systems Ltd', 'Vendor2 Systems Corporation')].sort())
  })
})

describe('namesMayMerge', () => {
  it('holds for the name variants consolidation proposes and not for unrelated or contrasting names', () => {
    for (const [a, b] of [['Alice Smith', 'alice smith.'], ['Dr. Alice Smith', 'Alice Smith'], ['IBM', 'International Business Machines'], ['Doe, Jane', 'Jane Doe'], ['Kubernetes', 'Kubernetis'], ['Acme Corp.', 'ACME']]) {
      expect({ a, b, merge: namesMayMerge(a!, b!) }).toEqual({ a, b, merge: true })
    }
    for (const [a, b] of [['alice smith', 'mallory jones'], ['ibm', 'international business machines'], ['Paris', 'Paris Hilton'], ['Mr. Smith', 'Mrs. Smith'], ['Dr. Smith', 'Smith'], ['!!!', '???']]) {
      expect({ a, b, merge: namesMayMerge(a!, b!) }).toEqual({ a, b, merge: false })
    }
  })

  it('agrees with proposeMerges when names are the only evidence', () => {
    const names = ['Alice Smith', 'Dr. Alice Smith', 'Smith', 'Dr. Smith', 'IBM', 'International Business Machines', 'Jane Doe', 'Doe, Jane', 'Kubernetes', 'Kubernetis', 'Paris', 'Paris Hilton', 'BA', 'Bank of America', 'Java', 'JavaScript']
    // empty descriptions and no edges: only the names can lift a pair over the threshold
    const proposed = new Set(propose(names.map((n) => entity(n, 'thing', ''))).map((p) => p.id))
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const id = pairId(normalizeName(names[i]!), normalizeName(names[j]!))
        expect({ pair: [names[i], names[j]], merge: namesMayMerge(names[i]!, names[j]!) }).toEqual({ pair: [names[i], names[j]], merge: proposed.has(id) })
      }
    }
  })
})
