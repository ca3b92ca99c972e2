// The postings index must score exactly as the Orama radix index it replaced: same hits, same
// raw BM25 scores, through upserts, removals and save/restore cycles, for single- and
// multi-field schemas with a boost; and the index's own ranking of the best few (`bm25Ranked`)
// must be Orama's search result, normalized, best first with ties by id.
import { create, insertMultiple, load as oramaLoad, removeMultiple, save as oramaSave, search as oramaSearch, type AnyOrama } from '@orama/orama'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bm25Ranked, loadRows, postingsIndex, presenceDocumentsStore, saveRows } from '../../src/search/postings-index'
import { compareRanked } from '../../src/search/top-k'
import { ENGLISH_STOP_WORDS } from '../../src/search/stop-words'
import { wholeWordIndex } from '../support/whole-word-radix-index'

// few words, so documents share them; stems, stop words, case, digits, hyphens and apostrophes
const WORDS = ['ada', 'Ada', 'lovelace', 'engine', 'engines', 'running', 'runs', 'run', 'the', 'of', 'and', 'a', 'cat', 'cats', 'café', 'cafe', 'x-ray', "o'neil", 'c++', '2024', 'first', 'program', 'Programs', 'karate', 'it', 'is', 'analytical', 'machine']
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', ' - ', '!']

const textArb = fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 14 }).map((parts) => parts.map(([w, s]) => w + s).join(''))

interface Schema {
  fields: string[]
  boost: Record<string, number>
}
const NOTES: Schema = { fields: ['text'], boost: {} }
const ENTITIES: Schema = { fields: ['name', 'description', 'queries'], boost: { name: 2 } }

type Op =
  | { kind: 'upsert'; docs: { key: number; texts: string[] }[] }
  | { kind: 'remove'; keys: number[] }
  | { kind: 'restore' }

function opArb(fields: number): fc.Arbitrary<Op> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('upsert' as const), docs: fc.array(fc.record({ key: fc.integer({ min: 0, max: 14 }), texts: fc.array(textArb, { minLength: fields, maxLength: fields }) }), { minLength: 1, maxLength: 6 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), keys: fc.array(fc.integer({ min: 0, max: 14 }), { minLength: 1, maxLength: 4 }) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'restore' as const }) },
  )
}

const tokenizer = { language: 'english' as const, stemming: true, stopWords: [...ENGLISH_STOP_WORDS] }

function schemaOf(s: Schema): Record<string, 'string'> {
  return Object.fromEntries(s.fields.map((f) => [f, 'string' as const]))
}

function radixDb(s: Schema): AnyOrama {
  return create({ schema: schemaOf(s), sort: { enabled: false }, components: { tokenizer, index: wholeWordIndex } }) as AnyOrama
}

function postingsDb(s: Schema): AnyOrama {
  return create({ schema: schemaOf(s), sort: { enabled: false }, components: { tokenizer, index: postingsIndex, documentsStore: presenceDocumentsStore(s.fields) } }) as AnyOrama
}

/** Every hit's raw score by id. */
function scores(db: AnyOrama, s: Schema, term: string, n: number): Map<string, number> {
  const result = oramaSearch(db, { term, properties: s.fields, boost: s.boost, limit: Math.max(n, 1) })
  if (result instanceof Promise) throw new Error('asynchronous search')
  return new Map(result.hits.map((h) => [h.id, h.score]))
}

function check(s: Schema) {
  return fc.property(fc.array(opArb(s.fields.length), { minLength: 1, maxLength: 25 }), fc.array(textArb, { minLength: 1, maxLength: 6 }), (ops, queries) => {
    let radix = radixDb(s)
    let postings = postingsDb(s)
    // the index wrappers' slot order: a removed document's slot goes to the last one
    const keys: string[] = []
    const row = (key: number, texts: string[]) => ({ id: `k${key}`, ...Object.fromEntries(s.fields.map((f, i) => [f, texts[i]!])) })
    const drop = (ids: string[]) => {
      removeMultiple(radix, ids)
      removeMultiple(postings, ids)
      for (const id of ids) {
        const at = keys.indexOf(id)
        keys[at] = keys[keys.length - 1]!
        keys.pop()
      }
    }
    const compare = () => {
      for (const q of queries) {
        const expected = scores(radix, s, q, keys.length)
        expect(scores(postings, s, q, keys.length)).toEqual(expected)
        const best = Math.max(0, ...expected.values())
        const ranked = best > 0 ? [...expected].map(([key, score]) => ({ key, score: score / best })).filter((h) => h.score > 0).sort(compareRanked) : []
        const top = (k: number) => bm25Ranked(postings, q, s.fields, s.boost, k, (x) => x).map(({ key, score }) => ({ key, score }))
        expect(top(keys.length + 1)).toEqual(ranked)
        expect(top(2)).toEqual(ranked.slice(0, 2))
      }
    }
    for (const op of ops) {
      if (op.kind === 'upsert') {
        const latest = new Map(op.docs.map((d) => [`k${d.key}`, d]))
        drop([...latest.keys()].filter((id) => keys.includes(id)))
        const rows = [...latest.values()].map((d) => row(d.key, d.texts))
        insertMultiple(radix, rows)
        insertMultiple(postings, rows)
        for (const id of latest.keys()) keys.push(id)
      } else if (op.kind === 'remove') {
        drop([...new Set(op.keys.map((k) => `k${k}`))].filter((id) => keys.includes(id)))
      } else {
        // both saved and restored as the indexes do: Orama's JSON, the postings in slot order
        const json = JSON.stringify(oramaSave(radix))
        radix = radixDb(s)
        oramaLoad(radix, JSON.parse(json))
        const saved = structuredClone(saveRows(postings, keys))
        postings = postingsDb(s)
        loadRows(postings, saved, keys)
      }
      compare()
    }
  })
}

describe('postings index', () => {
  it('scores a one-field schema exactly as the radix index, through upserts, removals and restores', () => {
    fc.assert(check(NOTES), { numRuns: 150 })
  })

  it('scores a three-field schema with a boost exactly as the radix index', () => {
    fc.assert(check(ENTITIES), { numRuns: 150 })
  })
})
