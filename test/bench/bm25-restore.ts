// `npx tsx test/bench/bm25-restore.ts [SIZES...]` (default 10000 100000): the BM25 part of the
// note and entity indexes, Orama's radix index saved as JSON (the format before) against the
// postings index saved as typed arrays: insertion, save, saved bytes (as the Node store keeps
// them: V8 serialization), reading those bytes back, restore, first and later queries. Both
// answer every query with the same scores (checked here too). Writes bench/results/bm25-restore.json.
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { deserialize, serialize } from 'node:v8'
import { count, create, insertMultiple, load as oramaLoad, save as oramaSave, search as oramaSearch, type AnyOrama } from '@orama/orama'
import { createEntityIndex, restoreEntityIndex } from '../../src/search/entity-index'
import { createNoteIndex, restoreNoteIndex } from '../../src/search/note-index'
import { loadRows, postingsIndex, presenceDocumentsStore, saveRows } from '../../src/search/postings-index'
import { ENGLISH_STOP_WORDS } from '../../src/search/stop-words'
import { wholeWordIndex } from '../support/whole-word-radix-index'
import { observationFor, word } from './engine'
import { percentile } from './stats'

interface Kind {
  name: 'notes' | 'entities'
  fields: string[]
  boost: Record<string, number>
  rows(n: number): Record<string, string>[]
}

const NOTES: Kind = {
  name: 'notes',
  fields: ['text'],
  boost: {},
  rows: (n) => Array.from({ length: n }, (_, i) => {
    const o = observationFor(i, n)
    return { id: `observation-${i}`, text: `${o.title}\n${o.content}` }
  }),
}
const ENTITIES: Kind = {
  name: 'entities',
  fields: ['name', 'description', 'queries'],
  boost: { name: 2 },
  // the engine bench's entities: a name and eight description words
  rows: (n) => Array.from({ length: n }, (_, i) => ({ id: `entity ${i}`, name: `Entity ${i}`, description: Array.from({ length: 8 }, (_, j) => word(i * 31 + j)).join(' '), queries: '' })),
}

const tokenizer = { language: 'english' as const, stemming: true, stopWords: [...ENGLISH_STOP_WORDS] }
const schemaOf = (kind: Kind) => Object.fromEntries(kind.fields.map((f) => [f, 'string' as const]))

function radixDb(kind: Kind): AnyOrama {
  return create({ schema: schemaOf(kind), sort: { enabled: false }, components: { tokenizer, index: wholeWordIndex } }) as AnyOrama
}

function postingsDb(kind: Kind): AnyOrama {
  return create({ schema: schemaOf(kind), sort: { enabled: false }, components: { tokenizer, index: postingsIndex, documentsStore: presenceDocumentsStore(kind.fields) } }) as AnyOrama
}

function timed<T>(f: () => T): [T, number] {
  const t0 = performance.now()
  const out = f()
  return [out, Math.round((performance.now() - t0) * 10) / 10]
}

function hits(db: AnyOrama, kind: Kind, term: string): Map<string, number> {
  const result = oramaSearch(db, { term, properties: kind.fields, boost: kind.boost, limit: count(db) })
  if (result instanceof Promise) throw new Error('asynchronous search')
  return new Map(result.hits.map((h) => [h.id, h.score]))
}

export interface Bm25RestoreRow {
  kind: string
  docs: number
  index: 'radix JSON (before)' | 'postings (after)'
  insertMs: number
  saveMs: number
  savedBytes: number
  deserializeMs: number
  restoreMs: number
  firstQueryMs: number
  queryP50Ms: number
}

function measure(kind: Kind, n: number, queries: string[]): { rows: Bm25RestoreRow[]; same: boolean } {
  const docs = kind.rows(n)
  const ids = docs.map((d) => d.id!)
  const out: Bm25RestoreRow[] = []
  const answers: Map<string, number>[][] = []
  for (const index of ['radix JSON (before)', 'postings (after)'] as const) {
    const before = index === 'radix JSON (before)'
    const make = () => (before ? radixDb(kind) : postingsDb(kind))
    const db = make()
    const [, insertMs] = timed(() => insertMultiple(db, docs))
    const [saved, saveMs] = timed(() => (before ? JSON.stringify(oramaSave(db)) : saveRows(db, ids)))
    const bytes = serialize(saved)
    const [read, deserializeMs] = timed(() => deserialize(bytes))
    const restored = make()
    const [, restoreMs] = timed(() => (before ? oramaLoad(restored, JSON.parse(read as string)) : loadRows(restored, read, ids)))
    if (count(restored) !== n) throw new Error(`${index} restored ${count(restored)} of ${n}`)
    const [, firstQueryMs] = timed(() => hits(restored, kind, queries[0]!))
    const times: number[] = []
    answers.push(queries.map((q) => {
      const [found, ms] = timed(() => hits(restored, kind, q))
      times.push(ms)
      return found
    }))
    out.push({ kind: kind.name, docs: n, index, insertMs, saveMs, savedBytes: bytes.byteLength, deserializeMs, restoreMs, firstQueryMs, queryP50Ms: percentile(times, 50) })
  }
  const same = answers[0]!.every((a, i) => a.size === answers[1]![i]!.size && [...a].every(([id, s]) => answers[1]![i]!.get(id) === s))
  return { rows: out, same }
}

export interface WholeIndexRow {
  kind: string
  docs: number
  /** The whole snapshot (BM25-only: no vectors) restored through restoreNoteIndex / restoreEntityIndex. */
  restoreMs: number
  snapshotBytes: number
}

/** The whole BM25-only index restore as the engine does it, for context. */
async function wholeIndex(n: number): Promise<WholeIndexRow[]> {
  const notes = await createNoteIndex()
  await notes.upsert(NOTES.rows(n).map((r) => ({ slug: r.id!, text: r.text! })))
  const noteSnap = serialize(await notes.snapshot())
  const entities = await createEntityIndex()
  await entities.upsert(ENTITIES.rows(n).map((r) => ({ key: r.id!, name: r.name!, type: 'thing', description: r.description!, queries: [] })))
  const entitySnap = serialize(await entities.snapshot())
  const noteSaved = deserialize(noteSnap)
  const entitySaved = deserialize(entitySnap)
  const t0 = performance.now()
  await restoreNoteIndex(noteSaved)
  const t1 = performance.now()
  await restoreEntityIndex(entitySaved)
  const t2 = performance.now()
  return [
    { kind: 'notes', docs: n, restoreMs: Math.round((t1 - t0) * 10) / 10, snapshotBytes: noteSnap.byteLength },
    { kind: 'entities', docs: n, restoreMs: Math.round((t2 - t1) * 10) / 10, snapshotBytes: entitySnap.byteLength },
  ]
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number)
  const load = { before: loadavg().map((x) => Math.round(x * 100) / 100) }
  const rows: Bm25RestoreRow[] = []
  const whole: WholeIndexRow[] = []
  let same = true
  for (const n of sizes.length ? sizes : [10_000, 100_000]) {
    // common and rare words of the workload, one and several at a time
    const queries = [word(3), `${word(11)} ${word(5_000)}`, word(90_001), `${word(7)} ${word(77)} ${word(777)}`, 'observation note', `entity ${n >> 1}`, word(123_456), `${word(42)} ${word(4242)}`]
    for (const kind of [NOTES, ENTITIES]) {
      const m = measure(kind, n, queries)
      rows.push(...m.rows)
      same &&= m.same
      console.table(m.rows)
    }
    whole.push(...(await wholeIndex(n)))
  }
  console.table(whole)
  console.log(`same hits and scores from both indexes: ${same ? 'yes' : 'NO'}`)
  const result = { load: { ...load, after: loadavg().map((x) => Math.round(x * 100) / 100) }, same, rows, whole }
  console.log(`load average before ${result.load.before.join(' ')}, after ${result.load.after.join(' ')}`)
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/bm25-restore.json', JSON.stringify(result, null, 2))
  console.log('wrote bench/results/bm25-restore.json')
  if (!same) process.exit(1)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
