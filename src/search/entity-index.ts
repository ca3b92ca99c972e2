// The index semantic recall ranks entities with: Orama BM25 over name, description and
// retrieval queries, fused with vector similarity (the best of an entity's description vector
// and its query vectors). Vectors live in a flat array of our own (see vector-rows.ts): Orama
// holds one vector per document, and an entity has one per text.

import { count, create, insertMultiple, removeMultiple } from '@orama/orama'
import { MemoryError } from '../core/errors'
import type { Embedder } from './embedder'
import { topKFused, topKOf, type Scored } from './top-k'
import { VectorRows } from './vector-rows'
import { ScoreScratch } from './score-scratch'
import { ENGLISH_STOP_WORDS } from './stop-words'
import { textDigest } from './text-digest'
import { KeySlots, mapSome } from '../core/key-slots'
import type { QueryTerm } from '../core/evidence'
import { bm25Ranked, isSavedPostings, type Bm25Hit, loadRows, postingsIndex, presenceDocumentsStore, saveRows, type SavedPostings } from './postings-index'

export interface EntityDoc {
  key: string
  name: string
  type: string
  description: string
  queries: string[]
}

export interface RankedEntity {
  key: string
  /** In [0, 1]; higher is better. */
  score: number
  /** Which of the query's words its name, description or queries hold (bit i: the i-th term `search` reports); 0 for a match by vector alone. */
  terms: number
  /** Which of them they hold only by a close paraphrase, where a caller has looked (see `NoteIndex.paraphrasesIn`). */
  paraphrases?: number
}

export type SearchMode = 'bm25' | 'vector' | 'hybrid'

export interface EntityIndexOptions {
  /** Without one the index is BM25-only. */
  embedder?: Embedder
  /** Share of the text and vector scores in hybrid mode; normalized to sum 1. */
  weights?: { text: number; vector: number }
  /** English stemming for BM25 (default on). Fixed at creation: a snapshot keeps its own. */
  stemming?: boolean
}

export interface EntityIndex {
  readonly mode: 'bm25' | 'hybrid'
  /** Adds or replaces documents by key; only documents whose text changed are re-embedded. */
  upsert(docs: EntityDoc[]): Promise<void>
  remove(keys: string[]): Promise<void>
  /**
   * Best first, ties by key; `mode` defaults to hybrid with an embedder, else bm25. `terms`,
   * when given, receives the query's words as this index analyzed them, with how many entities hold each.
   */
  search(query: string, limit: number, mode?: SearchMode, terms?: QueryTerm[]): Promise<RankedEntity[]>
  size(): number
  /** The keys of every indexed document. */
  keys(): string[]
  /**
   * Puts up to `count` more of a restore's keys in its maps by key, so that later changes find
   * them without scanning (called in idle time); true once every map is whole.
   */
  mapKeys(count: number): boolean
  /** Structured-clone-able (IndexedDB) state; restoring it embeds nothing. */
  snapshot(): Promise<IndexSnapshot>
}

/** The one format read: a snapshot of any other is unreadable, and the open rebuilds the index from the entities. */
export const INDEX_SNAPSHOT_FORMAT = 'cairn-entity-index@4'
/** Tokenizer, stop words and fields of the BM25 index; a saved index of another analysis is rebuilt. */
export const TEXT_ANALYSIS = 'orama3-english-stop-whole-word-unsorted@2'

export interface IndexSnapshot {
  format: typeof INDEX_SNAPSHOT_FORMAT
  /** Embedder id, or null for a BM25-only index. */
  embedder: string | null
  dimensions: number
  stemming: boolean
  analysis: typeof TEXT_ANALYSIS
  /**
   * The entities, by key, and a digest of what was indexed of each: the entities themselves are
   * saved beside the index already, so the index keeps only what tells a changed one apart.
   */
  keys: string[]
  digests: Float64Array
  /** The BM25 postings, documents numbered from 1 in `keys` order. */
  text: SavedPostings
  /** Vectors per document, in `keys` order. */
  rowCounts: Uint16Array
  /** All rows, `dimensions` int8 values each, in `keys` order. */
  vectors: Int8Array
  /** One per row: a value is the int8 times its row's scale. */
  scales: Float32Array
}

/** Tuned on the WordNet dev split (npm run eval): vector weight 0.3-0.4 is best there. */
export const DEFAULT_WEIGHTS = { text: 0.6, vector: 0.4 }
const TEXT_PROPERTIES: ('name' | 'description' | 'queries')[] = ['name', 'description', 'queries']
/** A name match counts more than a word deep in a description. */
const NAME_BOOST = 2
/** BM25 candidates fused in hybrid mode, at least. */
const MIN_TEXT_CANDIDATES = 100
/** Scores are rounded so last-bit differences (e.g. after a restore) never reorder results. */
const SCORE_STEP = 1e9

type TextDb = ReturnType<typeof createTextDb>
interface TextRow { id: string; name: string; description: string; queries: string }

function createTextDb(stemming: boolean) {
  return create({
    // queries as one string: Orama's BM25 statistics for string[] fields drift on removal
    schema: { name: 'string', description: 'string', queries: 'string' } as const,
    // nothing is sorted by a field: Orama's sort lists would copy every text into the saved index
    sort: { enabled: false },
    components: { tokenizer: { language: 'english', stemming, stopWords: [...ENGLISH_STOP_WORDS] }, index: postingsIndex, documentsStore: presenceDocumentsStore(TEXT_PROPERTIES) },
  })
}

export async function createEntityIndex(opts: EntityIndexOptions = {}): Promise<EntityIndex> {
  return new OramaEntityIndex(opts.embedder, normalizeWeights(opts.weights), opts.stemming ?? true)
}

/**
 * Rebuilds an index from `snapshot` without embedding anything. `documents` gives the entities'
 * documents by key, for when the saved BM25 part must be rebuilt (another analysis, unreadable
 * postings) from a snapshot that keeps only digests; without it such a restore fails.
 */
export async function restoreEntityIndex(saved: IndexSnapshot, opts: EntityIndexOptions & { documents?: (key: string) => EntityDoc | undefined } = {}): Promise<EntityIndex> {
  const snapshot = checkSnapshot(saved)
  const embedder = opts.embedder
  if (snapshot.embedder !== null && embedder && (embedder.id !== snapshot.embedder || embedder.dimensions !== snapshot.dimensions)) {
    throw new MemoryError('config_locked', `The saved index was built with ${snapshot.embedder} (${snapshot.dimensions} dimensions), not ${embedder.id} (${embedder.dimensions}); rebuild it from the entities.`, { saved: snapshot.embedder, offered: embedder.id })
  }
  if (snapshot.embedder === null && embedder) {
    throw new MemoryError('config_locked', `The saved index has no vectors; rebuild it from the entities to search with ${embedder.id}.`, { offered: embedder.id })
  }
  const index = new OramaEntityIndex(embedder, normalizeWeights(opts.weights), snapshot.stemming)
  index.load(snapshot, opts.documents)
  return index
}

class OramaEntityIndex implements EntityIndex {
  readonly mode: 'bm25' | 'hybrid'
  private db: TextDb
  /**
   * Each slot's key and the digest of the document indexed for it (`textDigest(textOf(doc))`),
   * as two arrays rather than an object per slot: a restore of 100,000 entities makes none.
   */
  private keyAt: string[] = []
  private digestAt: number[] = []
  /** Slots by key; a restore's is a map only once asked often (see KeySlots, slotOfHit). */
  private slotOf = new KeySlots()
  private readonly vectors: VectorRows | null
  /** A search's fused scores by slot, reused between searches. */
  private fused = new Float64Array(0)
  /** A search's per-slot scores, reused between searches. */
  private readonly scratch = new ScoreScratch()
  /** Mutations run one at a time; searches read the last applied state. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly embedder: Embedder | undefined,
    private readonly weights: { text: number; vector: number },
    private readonly stemming: boolean,
  ) {
    this.mode = embedder ? 'hybrid' : 'bm25'
    this.db = createTextDb(stemming)
    this.vectors = embedder ? new VectorRows(embedder.dimensions) : null
  }

  size(): number {
    return this.keyAt.length
  }

  keys(): string[] {
    return this.keyAt.slice()
  }

  mapKeys(count: number): boolean {
    return mapSome(count, this.slotOf, this.db.internalDocumentIDStore.idToInternalId)
  }

  async upsert(docs: EntityDoc[]): Promise<void> {
    const latest = new Map<string, EntityDoc>()
    for (const doc of docs) latest.set(checkDoc(doc).key, copyDoc(doc))
    return this.exclusive(async () => {
      const digests = new Map([...latest.values()].map((doc) => [doc.key, textDigest(textOf(doc))]))
      const changed = [...latest.values()].filter((doc) => this.digestAt[this.slotOf.get(doc.key) ?? -1] !== digests.get(doc.key))
      const vectors = await this.embedDocs(changed)
      // apply synchronously after the only await, so a search never sees half an upsert
      const removed = changed.map((d) => d.key).filter((key) => this.slotOf.has(key))
      if (removed.length) removeMultiple(this.db, removed)
      changed.forEach((doc, i) => {
        const slot = this.slotOf.get(doc.key) ?? this.keyAt.length
        this.keyAt[slot] = doc.key
        this.digestAt[slot] = digests.get(doc.key)!
        this.slotOf.set(doc.key, slot)
        if (this.vectors) this.vectors.set(slot, vectors[i]!)
      })
      if (changed.length) insertMultiple(this.db, changed.map(textRow))
    })
  }

  async remove(keys: string[]): Promise<void> {
    return this.exclusive(async () => {
      const present = [...new Set(keys)].filter((key) => this.slotOf.has(key))
      if (!present.length) return
      removeMultiple(this.db, present)
      for (const key of present) {
        const slot = this.slotOf.get(key)!
        const last = this.keyAt.length - 1
        this.vectors?.clear(slot)
        // keep slots dense: the last entry takes the hole
        if (slot !== last) {
          const moved = this.keyAt[last]!
          this.keyAt[slot] = moved
          this.digestAt[slot] = this.digestAt[last]!
          this.slotOf.set(moved, slot)
          this.vectors?.move(last, slot)
        }
        this.keyAt.pop()
        this.digestAt.pop()
        this.slotOf.delete(key)
      }
    })
  }

  async search(query: string, limit: number, mode?: SearchMode, terms?: QueryTerm[]): Promise<RankedEntity[]> {
    if (typeof query !== 'string') throw new MemoryError('invalid_request', 'search takes a query string')
    const wanted = mode ?? this.mode
    if (wanted !== 'bm25' && !this.embedder) {
      throw new MemoryError('invalid_request', `${wanted} search needs an embedder; this index is BM25-only`, { mode: wanted })
    }
    const term = query.trim()
    const k = Math.floor(limit)
    if (!term || !(k > 0) || this.keyAt.length === 0) return []
    if (wanted === 'bm25') return this.textHits(term, k, terms).map((h) => ({ key: h.key, score: h.score, terms: h.terms }))
    const [queryVector] = await this.embedder!.embed([term])
    if (!queryVector || queryVector.length !== this.embedder!.dimensions) {
      throw new MemoryError('model_failed', `embedder ${this.embedder!.id} returned no ${this.embedder!.dimensions}-dimensional vector for the query`)
    }
    // everything below is synchronous, so the slots cannot move under it
    const n = this.keyAt.length
    const similarity = this.scratch.zeroed(0, n) // stays 0 for negative similarity
    this.vectors!.maxSimilarity(queryVector, similarity)
    if (wanted === 'vector') return this.fusedTop(similarity, n, k, { text: 0, vector: 1 }, new Map()).map((h) => ({ key: h.key, score: h.score, terms: 0 }))
    const textHits = this.textHits(term, Math.max(k * 4, MIN_TEXT_CANDIDATES), terms)
    const text = new Map(textHits.map((hit) => [this.slotOfHit(hit), hit.score]))
    const held = new Map(textHits.map((hit) => [hit.key, hit.terms]))
    return this.fusedTop(similarity, n, k, this.weights, text).map((h) => ({ key: h.key, score: h.score, terms: held.get(h.key) ?? 0 }))
  }

  /** The k best slots by fused score (see `topKFused`), `text` holding the text hits' scores by slot. */
  private fusedTop(similarity: Float32Array, n: number, k: number, weights: { text: number; vector: number }, text: ReadonlyMap<number, number>): Scored[] {
    // reused between searches when every slot must be fused: no 100,000-long array per query
    if (this.fused.length < n) this.fused = new Float64Array(Math.max(n, this.fused.length * 2))
    return topKFused(similarity, n, k, weights, text, (s) => this.keyAt[s]!, round, this.fused)
  }


  async snapshot(): Promise<IndexSnapshot> {
    await this.queue.catch(() => undefined)
    const keys = this.keys()
    const digests = Float64Array.from(this.digestAt)
    const dims = this.embedder?.dimensions ?? 0
    const rows = this.vectors?.export(keys.length) ?? { rowCounts: new Uint16Array(keys.length), data: new Int8Array(0), scales: new Float32Array(0) }
    const text = saveRows(this.db, keys)
    return { format: INDEX_SNAPSHOT_FORMAT, embedder: this.embedder?.id ?? null, dimensions: dims, stemming: this.stemming, analysis: TEXT_ANALYSIS, keys, digests, text, rowCounts: rows.rowCounts, vectors: rows.data, scales: rows.scales }
  }

  /** Fills an empty index from a checked snapshot; Orama's saved state when it is of this analysis. */
  load(snapshot: IndexSnapshot, documents?: (key: string) => EntityDoc | undefined): void {
    const keys = snapshot.keys
    if (this.keyAt.length) throw new Error('load needs an empty entity index')
    this.keyAt = keys.slice()
    this.digestAt = Array.from(snapshot.digests)
    // a key listed twice is a corrupt snapshot: found when the map is first built
    const listedTwice = (key: string) => corrupt(`key "${key}" appears twice`)
    this.slotOf = new KeySlots(keys, 0, listedTwice)
    this.vectors?.load({ rowCounts: snapshot.rowCounts, data: snapshot.vectors, scales: snapshot.scales })
    if (snapshot.analysis === TEXT_ANALYSIS && isSavedPostings(snapshot.text, TEXT_PROPERTIES)) {
      try {
        loadRows(this.db, snapshot.text, this.keyAt, listedTwice)
        if (count(this.db) === this.keyAt.length) return
      } catch {
        // fall through to a rebuild
      }
    }
    // postings of another analysis, or unreadable ones, are rebuilt from the documents: no
    // embedding needed. A document given now may differ from the one indexed; its entry keeps
    // the saved digest, so the next upsert of it indexes it again.
    const rows = documents ? keys.map((key) => documents(key) ?? { key, name: '', type: '', description: '', queries: [] }) : undefined
    if (!rows) throw corrupt('the postings do not match the documents')
    this.db = createTextDb(this.stemming)
    insertMultiple(this.db, rows.map(textRow))
  }

  /** BM25 hits, best first and ties by key, normalized so the best is 1. */
  private textHits(term: string, k: number, terms?: QueryTerm[]): Bm25Hit[] {
    // every match as Orama's search scores it; ties are cut by key here, since Orama breaks them
    // by insertion order, which differs between devices
    return bm25Ranked(this.db, term, TEXT_PROPERTIES, { name: NAME_BOOST }, k, round, terms)
  }

  /**
   * A text hit's slot. Until anything changes after a restore, an entity's id in the BM25 index
   * is its slot + 1 (the restore numbered them so): a recall right after an open looks no key up.
   */
  private slotOfHit(hit: { key: string; id: number }): number {
    return this.slotOf.asRestored ? hit.id - 1 : this.slotOf.get(hit.key)!
  }

  private async embedDocs(docs: EntityDoc[]): Promise<Float32Array[][]> {
    if (!this.embedder || docs.length === 0) return docs.map(() => [])
    const texts = docs.flatMap(vectorTexts)
    const vectors = await this.embedder.embed(texts)
    const dims = this.embedder.dimensions
    if (vectors.length !== texts.length || vectors.some((v) => v.length !== dims)) {
      throw new MemoryError('model_failed', `embedder ${this.embedder.id} returned ${vectors.length} vectors for ${texts.length} texts (expected ${dims} dimensions each)`)
    }
    let at = 0
    return docs.map((doc) => vectors.slice(at, (at += vectorTexts(doc).length)))
  }

  private exclusive(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => undefined)
    return run
  }
}

/** What one vector stands for: the named description, then each retrieval query. */
function vectorTexts(doc: EntityDoc): string[] {
  return [`${doc.name}. ${doc.description}`, ...doc.queries]
}

/** Everything that is indexed; an upsert with the same text re-indexes nothing. */
function textOf(doc: EntityDoc): string {
  return JSON.stringify([doc.name, doc.description, doc.queries])
}

function textRow(doc: EntityDoc): TextRow {
  return { id: doc.key, name: doc.name, description: doc.description, queries: doc.queries.join('\n') }
}

function copyDoc(doc: EntityDoc): EntityDoc {
  return { key: doc.key, name: doc.name, type: doc.type, description: doc.description, queries: [...doc.queries] }
}

function round(score: number): number {
  return Math.round(score * SCORE_STEP) / SCORE_STEP
}

function checkDoc(doc: EntityDoc): EntityDoc {
  const ok =
    typeof doc?.key === 'string' && doc.key.length > 0 &&
    typeof doc.name === 'string' && typeof doc.type === 'string' && typeof doc.description === 'string' &&
    Array.isArray(doc.queries) && doc.queries.every((q) => typeof q === 'string')
  if (!ok) throw new MemoryError('invalid_request', 'an indexed entity needs a non-empty key and string name, type, description and queries', { key: (doc as { key?: unknown } | null)?.key })
  return doc
}

function normalizeWeights(weights: { text: number; vector: number } | undefined): { text: number; vector: number } {
  const { text, vector } = weights ?? DEFAULT_WEIGHTS
  const sum = text + vector
  if (!(text >= 0 && vector >= 0 && sum > 0)) {
    throw new MemoryError('invalid_request', 'hybrid weights must be non-negative numbers that are not both zero', { weights })
  }
  return { text: text / sum, vector: vector / sum }
}

/** A snapshot of this format whose parts fit together, or `storage_failed`. */
function checkSnapshot(s: IndexSnapshot): IndexSnapshot {
  if (s?.format !== INDEX_SNAPSHOT_FORMAT) throw corrupt(`unknown format ${String((s as { format?: unknown } | null)?.format)}`)
  if (!Array.isArray(s.keys) || !s.keys.every((key) => typeof key === 'string' && key) || !(s.digests instanceof Float64Array) || s.digests.length !== s.keys.length) throw corrupt('missing documents or their digests')
  if (!(s.rowCounts instanceof Uint16Array) || !(s.vectors instanceof Int8Array) || !(s.scales instanceof Float32Array)) throw corrupt('missing documents or vectors')
  const rows = s.rowCounts.reduce((a, b) => a + b, 0)
  if (s.rowCounts.length !== s.keys.length || s.scales.length !== rows || s.vectors.length !== rows * s.dimensions) throw corrupt('vector counts do not match the documents')
  return s
}

function corrupt(why: string): MemoryError {
  return new MemoryError('storage_failed', `The saved entity index is unreadable (${why}); rebuild it from the entities.`, { why })
}
