import { describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import type { Embedder } from '../../src/search/embedder'
import { quantizeQuery } from '../../src/search/int8-dots'
import { quantizeInto } from '../../src/search/vector-rows'
import { createEntityIndex, DEFAULT_WEIGHTS, restoreEntityIndex, type EntityDoc, type EntityIndex, type IndexSnapshot, type SearchMode } from '../../src/search/entity-index'

/** A snapshot as a format that kept the documents saved it: `docs` in slot order, no digests. */
function withDocs(snap: IndexSnapshot, docs: EntityDoc[]) {
  const { keys, digests: _, ...rest } = snap
  return { ...rest, docs: keys.map((key) => structuredClone(docs.find((d) => d.key === key)!)) }
}

// A small real embedder: words go through a tiny thesaurus to a canonical form, then hashed
// character trigrams of the canonical words make a 256-d bag, L2-normalized. Synonyms in the
// thesaurus share vectors; other words only share spelling.
const THESAURUS: Record<string, string> = { automobile: 'car', auto: 'car', motorcar: 'car', physician: 'doctor', medic: 'doctor', feline: 'cat', kitty: 'cat' }
const DIMS = 256

function hash(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

function trigramVector(text: string): Float32Array {
  const v = new Float32Array(DIMS)
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const word = ` ${THESAURUS[raw] ?? raw} `
    for (let i = 0; i + 3 <= word.length; i++) {
      const h = hash(word.slice(i, i + 3))
      v[h % DIMS]! += h & 0x100 ? 1 : -1
    }
  }
  const norm = Math.hypot(...v)
  return norm > 0 ? v.map((x) => x / norm) : v
}

function countingEmbedder(): Embedder & { calls: number; texts: number } {
  return {
    id: 'test-trigram-256@1',
    dimensions: DIMS,
    checksum: 'test',
    calls: 0,
    texts: 0,
    async embed(texts: string[]) {
      this.calls++
      this.texts += texts.length
      return texts.map(trigramVector)
    },
  }
}

function doc(key: string, description: string, queries: string[] = [], name = key): EntityDoc {
  return { key, name, type: 'thing', description, queries }
}

const PEOPLE: EntityDoc[] = [
  doc('ada lovelace', 'mathematician who wrote the first published algorithm for the analytical engine', ['who wrote the first program?'], 'Ada Lovelace'),
  doc('grace hopper', 'computer scientist who built the first compiler and popularised machine-independent languages', [], 'Grace Hopper'),
  doc('sedan', 'a car with four doors and a separate trunk', ['what should a family drive?']),
  doc('tabby', 'a cat with a striped coat', []),
  doc('dr. okafor', 'doctor at the riverside clinic, treats our team', ['who treats sprains?'], 'Dr. Okafor'),
]

async function keys(index: EntityIndex, query: string, limit = 10, mode?: SearchMode): Promise<string[]> {
  return (await index.search(query, limit, mode)).map((r) => r.key)
}

describe('entity index, BM25 only', () => {
  it('finds entities by name, description and retrieval query', async () => {
    const index = await createEntityIndex()
    expect(index.mode).toBe('bm25')
    await index.upsert(PEOPLE)
    expect(index.size()).toBe(5)
    expect((await keys(index, 'Lovelace'))[0]).toBe('ada lovelace')
    expect((await keys(index, 'compiler'))[0]).toBe('grace hopper')
    expect(await keys(index, 'sprains')).toEqual(['dr. okafor'])
    expect((await keys(index, 'family drive'))[0]).toBe('sedan')
    // English stemming: "compilers" matches "compiler"
    expect((await keys(index, 'compilers'))[0]).toBe('grace hopper')
  })

  it('matches whole words, not prefixes', async () => {
    const index = await createEntityIndex()
    await index.upsert([doc('cardinal', 'a red songbird'), doc('sedan', 'a car with four doors')])
    expect(await keys(index, 'car')).toEqual(['sedan'])
    expect(await keys(index, 'cars')).toEqual(['sedan'])
    expect(await keys(index, 'song')).toEqual([])
  })

  it('scores lie in [0, 1], best first, with the best text match at 1', async () => {
    const index = await createEntityIndex()
    await index.upsert(PEOPLE)
    const hits = await index.search('first algorithm compiler', 10)
    expect(hits.length).toBeGreaterThan(1)
    expect(hits[0]!.score).toBe(1)
    for (const h of hits) expect(h.score).toBeGreaterThan(0), expect(h.score).toBeLessThanOrEqual(1)
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score)
  })

  it('remove really removes, and a removed key can come back', async () => {
    const index = await createEntityIndex()
    await index.upsert(PEOPLE)
    await index.remove(['grace hopper', 'not there'])
    expect(index.size()).toBe(4)
    expect(await keys(index, 'compiler')).toEqual([])
    await index.upsert([doc('grace hopper', 'admiral and compiler pioneer')])
    expect(await keys(index, 'compiler')).toEqual(['grace hopper'])
  })

  it('upsert replaces the text of an existing key', async () => {
    const index = await createEntityIndex()
    await index.upsert(PEOPLE)
    await index.upsert([doc('tabby', 'an orange kitten from the shelter', ['who sleeps on the keyboard?'])])
    expect(index.size()).toBe(5)
    expect(await keys(index, 'striped')).toEqual([])
    expect(await keys(index, 'keyboard')).toEqual(['tabby'])
    expect(await keys(index, 'shelter')).toEqual(['tabby'])
  })

  it('cuts ties by key, whatever the insertion order', async () => {
    const same = ['delta', 'alpha', 'echo', 'charlie', 'bravo'].map((k) => doc(k, 'identical lighthouse keeper', [], 'Keeper'))
    const a = await createEntityIndex()
    await a.upsert(same)
    const b = await createEntityIndex()
    for (const d of [...same].reverse()) await b.upsert([d])
    expect(await keys(a, 'lighthouse', 2)).toEqual(['alpha', 'bravo'])
    expect(await keys(b, 'lighthouse', 2)).toEqual(['alpha', 'bravo'])
    expect(await keys(b, 'lighthouse', 10)).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo'])
  })

  it('returns nothing for an empty query, a zero limit or an empty index, and refuses vector modes', async () => {
    const empty = await createEntityIndex()
    expect(await empty.search('anything', 10)).toEqual([])
    const index = await createEntityIndex()
    await index.upsert(PEOPLE)
    expect(await index.search('', 10)).toEqual([])
    expect(await index.search('   ', 10)).toEqual([])
    expect(await index.search('compiler', 0)).toEqual([])
    expect(await index.search('!!!', 10)).toEqual([])
    expect(await index.search('the of a', 10)).toEqual([]) // stop words only
    const err = await index.search('compiler', 10, 'vector').catch((e: unknown) => e)
    expect(isMemoryError(err) && err.code).toBe('invalid_request')
  })

  it('rejects a malformed document', async () => {
    const index = await createEntityIndex()
    const err = await index.upsert([{ key: '', name: 'x', type: 't', description: 'd', queries: [] }]).catch((e: unknown) => e)
    expect(isMemoryError(err) && err.code).toBe('invalid_request')
    expect(index.size()).toBe(0)
  })
})

describe('entity index with vectors', () => {
  it('vector search matches synonyms that share no word', async () => {
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    expect(index.mode).toBe('hybrid')
    await index.upsert(PEOPLE)
    expect(await keys(index, 'automobile', 10, 'bm25')).toEqual([])
    expect((await keys(index, 'automobile', 1, 'vector'))).toEqual(['sedan'])
    expect((await keys(index, 'physician', 1, 'vector'))).toEqual(['dr. okafor'])
    // hybrid still returns vector hits when no word matches
    expect((await keys(index, 'feline', 1))).toEqual(['tabby'])
  })

  it('hybrid keeps text matches when the query has no known vector', async () => {
    const index = await createEntityIndex({ embedder: { ...countingEmbedder(), embed: async (t: string[]) => t.map(() => new Float32Array(DIMS)) } })
    await index.upsert(PEOPLE)
    const hits = await index.search('compiler', 5)
    expect(hits.map((h) => h.key)).toEqual(['grace hopper'])
    expect(hits[0]!.score).toBeCloseTo(DEFAULT_WEIGHTS.text / (DEFAULT_WEIGHTS.text + DEFAULT_WEIGHTS.vector), 9) // the text weight times a normalized text score of 1
    expect(await index.search('compiler', 5, 'vector')).toEqual([])
  })

  it('matches through retrieval query vectors (the best of an entity’s vectors)', async () => {
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    await index.upsert([doc('okafor', 'runs the riverside clinic', ['who is our medic?']), doc('tabby', 'a striped cat')])
    expect(await keys(index, 'doctor', 1, 'vector')).toEqual(['okafor'])
  })

  it('re-embeds only documents whose text changed', async () => {
    const embedder = countingEmbedder()
    const index = await createEntityIndex({ embedder })
    await index.upsert(PEOPLE)
    expect(embedder.texts).toBe(5 + 3) // one description vector each, plus one per retrieval query
    const before = embedder.calls
    await index.upsert(PEOPLE.map((d) => ({ ...d, type: 'renamed type' })))
    expect(embedder.calls).toBe(before)
    await index.upsert([...PEOPLE.slice(0, 4), doc('dr. okafor', 'physician at the hill clinic', [], 'Dr. Okafor')])
    expect(embedder.calls).toBe(before + 1)
    expect(embedder.texts).toBe(8 + 1)
    expect(await keys(index, 'hill', 10, 'bm25')).toEqual(['dr. okafor'])
  })

  it('snapshot -> restore gives identical rankings and embeds nothing but queries', async () => {
    const embedder = countingEmbedder()
    const index = await createEntityIndex({ embedder, weights: { text: 0.3, vector: 0.7 } })
    await index.upsert(PEOPLE)
    await index.remove(['sedan'])
    await index.upsert([doc('roadster', 'a two-seat open car'), doc('tabby', 'a ginger cat')])
    const snap = structuredClone(await index.snapshot())
    const calls = embedder.calls
    const restored = await restoreEntityIndex(snap, { embedder, weights: { text: 0.3, vector: 0.7 } })
    expect(embedder.calls).toBe(calls)
    expect(restored.size()).toBe(index.size())
    for (const q of ['automobile', 'who wrote the first program', 'cat', 'clinic doctor', 'first']) {
      for (const mode of ['bm25', 'vector', 'hybrid'] as const) {
        expect(await restored.search(q, 10, mode)).toEqual(await index.search(q, 10, mode))
      }
    }
    expect(embedder.calls - calls).toBe(2 * 5 * 2) // one query vector per vector/hybrid search, per index
    // both keep working the same way after further edits
    for (const target of [index, restored]) {
      await target.upsert([doc('tabby', 'a grey cat from the first shelter'), doc('van', 'a delivery car')])
      await target.remove(['ada lovelace'])
    }
    for (const q of ['first', 'car', 'cat shelter']) expect(await restored.search(q, 10)).toEqual(await index.search(q, 10))
  })

  it('rebuilds the text index from the documents when the saved one is of another analysis', async () => {
    const embedder = countingEmbedder()
    const index = await createEntityIndex({ embedder })
    await index.upsert(PEOPLE)
    const snap = await index.snapshot()
    const calls = embedder.calls
    // the snapshot keeps digests: it rebuilds from the documents it is given, and fails without them
    const other = { ...snap, analysis: 'older' as never }
    const given = await restoreEntityIndex(structuredClone(other), { embedder, documents: (key) => PEOPLE.find((d) => d.key === key) })
    expect(embedder.calls).toBe(calls)
    expect(await given.search('compiler first', 10, 'bm25')).toEqual(await index.search('compiler first', 10, 'bm25'))
    const none = await restoreEntityIndex(structuredClone(other), { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(none) && none.code).toBe('storage_failed')
    const broken = await restoreEntityIndex({ ...snap, format: 'other' as never }, { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(broken) && broken.code).toBe('storage_failed')
  })

  it('reads only its own format: a snapshot of an earlier one is unreadable, which an open answers with a rebuild', async () => {
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    await index.upsert(PEOPLE)
    const snap = await index.snapshot()
    for (const format of ['cairn-entity-index@1', 'cairn-entity-index@2', 'cairn-entity-index@3']) {
      const old = await restoreEntityIndex(structuredClone({ ...withDocs(snap, PEOPLE), format }) as never, { embedder: countingEmbedder() }).catch((e: unknown) => e)
      expect(isMemoryError(old) && old.code).toBe('storage_failed')
    }
  })

  it('keeps a digest of each document, not the document, and tells a changed one by it after a restore', async () => {
    const embedder = countingEmbedder()
    const index = await createEntityIndex({ embedder })
    await index.upsert(PEOPLE)
    const snap = structuredClone(await index.snapshot())
    expect([...snap.keys].sort()).toEqual(PEOPLE.map((d) => d.key).sort())
    expect(JSON.stringify(snap.keys)).not.toContain(PEOPLE[0]!.description)
    const restored = await restoreEntityIndex(snap, { embedder })
    const calls = embedder.calls
    // the same documents, and a change of type alone (not indexed), embed nothing
    await restored.upsert([...PEOPLE.slice(1), { ...PEOPLE[0]!, type: 'other' }])
    expect(embedder.calls).toBe(calls)
    await restored.upsert([{ ...PEOPLE[0]!, description: `${PEOPLE[0]!.description}, and more` }])
    expect(embedder.calls).toBeGreaterThan(calls)
    const misdigested = await restoreEntityIndex({ ...snap, digests: new Float64Array(1) }, { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(misdigested) && misdigested.code).toBe('storage_failed')
  })

  it('refuses to restore with a different embedder', async () => {
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    await index.upsert(PEOPLE)
    const snap = await index.snapshot()
    const other = { ...countingEmbedder(), id: 'other@1' }
    const err = await restoreEntityIndex(snap, { embedder: other }).catch((e: unknown) => e)
    expect(isMemoryError(err) && err.code).toBe('config_locked')
  })

  it('agrees with a brute-force ranking after random upserts and removes', async () => {
    // the index stores int8 rows with a scale each and scans with an int16 query: the oracle rounds the same way
    const similarity = (text: string, query: { values: Int16Array; scale: number }) => {
      const q = new Int8Array(DIMS)
      const scale = quantizeInto(trigramVector(text), q, 0)
      return q.reduce((s, x, i) => s + x * query.values[i]!, 0) * scale * query.scale
    }
    let seed = 7
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32
    const vocab = 'river stone ledger orchard lantern harbor copper meadow signal archive falcon car cat doctor kitty auto'.split(' ')
    const phrase = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ')
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    const truth = new Map<string, EntityDoc>()
    for (let step = 0; step < 300; step++) {
      const key = `e${Math.floor(rand() * 40)}`
      if (rand() < 0.3) {
        await index.remove([key])
        truth.delete(key)
      } else {
        const d = doc(key, phrase(1 + Math.floor(rand() * 5)), Array.from({ length: Math.floor(rand() * 3) }, () => phrase(2)))
        await index.upsert([d])
        truth.set(key, d)
      }
    }
    expect(index.size()).toBe(truth.size)
    for (let q = 0; q < 20; q++) {
      const query = phrase(2)
      const qv = quantizeQuery(trigramVector(query))
      const expected = [...truth.values()]
        .map((d) => {
          const best = Math.max(0, ...[`${d.name}. ${d.description}`, ...d.queries].map((t) => similarity(t, qv)))
          return { key: d.key, score: Math.round(Math.fround(best) * 1e9) / 1e9 }
        })
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1))
        .slice(0, 8)
      const got = await index.search(query, 8, 'vector')
      expect(got.map((r) => r.key)).toEqual(expected.map((r) => r.key))
      got.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i]!.score, 5))
    }
  })

  it('a restored index changed afterwards ranks as the index it was saved from, changed the same way', async () => {
    let seed = 5
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32
    const vocab = 'river stone ledger orchard lantern harbor copper meadow signal archive falcon car cat doctor kitty auto'.split(' ')
    const phrase = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ')
    const original = await createEntityIndex({ embedder: countingEmbedder() })
    await original.upsert(Array.from({ length: 30 }, (_, i) => doc(`e${i}`, phrase(2 + (i % 4)), i % 3 ? [] : [phrase(2)])))
    const restored = await restoreEntityIndex(structuredClone(await original.snapshot()), { embedder: countingEmbedder() })
    const queries = ['river car', 'copper signal', 'doctor kitty', 'meadow']
    const same = async () => {
      for (const q of queries) for (const mode of ['bm25', 'hybrid'] as const) expect(await restored.search(q, 8, mode)).toEqual(await original.search(q, 8, mode))
    }
    // searched first, as after an open: nothing looked up by key yet
    await same()
    for (let step = 0; step < 60; step++) {
      // the maps by key built a part at a time, as in idle time after an open
      if (step % 3 === 0) restored.mapKeys(4)
      const key = `e${Math.floor(rand() * 40)}`
      if (rand() < 0.35) {
        for (const index of [original, restored]) await index.remove([key])
      } else {
        const d = doc(key, phrase(1 + Math.floor(rand() * 5)))
        for (const index of [original, restored]) await index.upsert([d])
      }
      if (step % 10 === 9) await same()
    }
    expect(restored.keys().sort()).toEqual(original.keys().sort())
    while (!restored.mapKeys(10));
    await same()
  })

  it('a snapshot listing an entity twice answers searches, and is refused as unreadable once changes build its map', async () => {
    const index = await createEntityIndex({ embedder: countingEmbedder() })
    await index.upsert(PEOPLE)
    const snap = structuredClone(await index.snapshot())
    snap.keys[1] = snap.keys[0]!
    const restored = await restoreEntityIndex(snap, { embedder: countingEmbedder() })
    expect(await keys(restored, 'clinic', 3, 'bm25')).toEqual(['dr. okafor'])
    const errors: unknown[] = []
    for (let i = 0; i < 100; i++) await restored.upsert([doc(`van ${i}`, 'a delivery car')]).catch((e: unknown) => errors.push(e))
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.every((e) => isMemoryError(e) && e.code === 'storage_failed')).toBe(true)
  })
})
