// Orama components for full-text fields that only ever need whole-word lookup. The index keeps
// a term -> postings table per field where Orama's default keeps a radix tree, and scores with
// Orama's BM25 from the same statistics Orama keeps (tokens, field lengths, the running average
// field length, matching-document counts), so scores equal those of Orama's own index.
//
// It saves to typed arrays (compressed sparse rows) and restores without rebuilding: the saved
// postings stay frozen, a term gets mutable postings only when a change first touches it, and the
// terms of a saved document are looked up only when that document is first removed. The
// documents store keeps which documents are present, not their texts: the caller has those.

import { count as oramaCount, load as oramaLoad, save as oramaSave } from '@orama/orama'
import { KeySlots } from '../core/key-slots'
import { allSteps, type Steps } from '../core/steps'
import type { QueryTerm } from '../core/evidence'
import { rankSlots, type Scored } from './top-k'
import type { AnyDocument, AnyOrama, components, IDocumentsStore, IIndex, SearchableType, Tokenizer, TokenScore } from '@orama/orama'

type InternalDocumentIDStore = components.internalDocumentIDStore.InternalDocumentIDStore

export const POSTINGS_FORMAT = 'cairn-postings@1'

/** One field as saved: documents are numbered from 1 in the order the saver chose. */
export interface SavedField {
  /** Every term with at least one document, sorted by code unit, joined by '\n' (never part of a token). */
  terms: string
  /** Term t's documents are `docs[starts[t]..starts[t + 1])`, ascending. */
  starts: Int32Array
  docs: Int32Array
  /** Tokens of document i at `lengths[i]`; `lengths[0]` is unused. */
  lengths: Int32Array
  /** Orama's running average field length, kept exactly: recomputing it could differ in the last bit. */
  average: number | null
}

export interface SavedPostings {
  format: typeof POSTINGS_FORMAT
  /** Documents numbered 1..documents. */
  documents: number
  fields: Record<string, SavedField>
}

/** A term's documents: a live list or set once changed, else a slice of the frozen postings. */
type Postings = Set<number> | Int32Array

/**
 * Postings that have only grown since the load: a growable array, far lighter than a set for
 * an import's thousands of insertions. A removal turns them into a set.
 */
class GrowingPostings {
  ids: Int32Array
  size: number
  constructor(from: Int32Array) {
    this.ids = new Int32Array(Math.max(4, from.length * 2))
    this.ids.set(from)
    this.size = from.length
  }
  add(id: number): void {
    if (this.size === this.ids.length) {
      const grown = new Int32Array(this.size * 2)
      grown.set(this.ids)
      this.ids = grown
    }
    this.ids[this.size++] = id
  }
  view(): Int32Array {
    return this.ids.subarray(0, this.size)
  }
}

class FieldPostings {
  average: number | undefined = undefined
  lengths: Int32Array = new Int32Array(16)
  /** The loaded lengths belong to the snapshot: copied before the first write. */
  private lengthsBorrowed = false
  /** Terms changed since the load (every term, in an index never loaded). */
  readonly live = new Map<string, Set<number> | GrowingPostings>()
  /** The terms of each document inserted since the load, for its removal. */
  readonly docTerms = new Map<number, string[]>()
  // the loaded part, never written
  frozenTerms: string[] = []
  frozenStarts: Int32Array = new Int32Array(1)
  frozenDocs: Int32Array = new Int32Array(0)
  /** Documents 1..frozenCount were loaded; those removed since are marked gone. */
  frozenCount = 0
  frozenGone: Uint8Array | null = null
  /** Built on the first removal of a loaded document: each loaded document's term numbers. */
  private frozenDocStarts: Int32Array | null = null
  private frozenDocTermIds: Int32Array | null = null

  postings(term: string): Postings | undefined {
    const live = this.live.get(term)
    if (live) return live instanceof GrowingPostings ? live.view() : live
    const t = this.frozenTermId(term)
    return t < 0 ? undefined : this.frozenDocs.subarray(this.frozenStarts[t]!, this.frozenStarts[t + 1]!)
  }

  insert(id: number, tokens: string[], docsCount: number): void {
    // Orama's own running average, step for step, so it stays bit-identical
    this.average = ((this.average ?? 0) * (docsCount - 1) + tokens.length) / docsCount
    if (id >= this.lengths.length || this.lengthsBorrowed) {
      const grown = new Int32Array(Math.max(id + 1, id >= this.lengths.length ? this.lengths.length * 2 : this.lengths.length))
      grown.set(this.lengths)
      this.lengths = grown
      this.lengthsBorrowed = false
    }
    this.lengths[id] = tokens.length
    // tokens are distinct and a document is removed before it is inserted again: no duplicates
    for (const token of tokens) this.mutable(token).add(id)
    this.docTerms.set(id, tokens)
  }

  remove(id: number, docsCount: number): void {
    const length = this.lengths[id] ?? 0
    this.average = docsCount > 1 ? (this.average! * docsCount - length) / (docsCount - 1) : undefined
    if (this.lengthsBorrowed) {
      this.lengths = this.lengths.slice()
      this.lengthsBorrowed = false
    }
    if (id < this.lengths.length) this.lengths[id] = 0
    let terms = this.docTerms.get(id)
    if (terms) this.docTerms.delete(id)
    else if (id <= this.frozenCount && !this.frozenGone![id]) {
      this.frozenGone![id] = 1
      terms = this.frozenTermsOf(id)
    }
    for (const term of terms ?? []) this.removable(term).delete(id)
  }

  /**
   * The saved form, documents renumbered: `rowOf(id)` is the saved number (from 1) or 0 for
   * none. In steps (see core/steps): a note index of 100,000 notes has as many terms, and
   * saving them at once held the worker for half a second.
   */
  *save(rowOf: Int32Array, rows: number): Steps<SavedField> {
    const all = new Set<string>(this.live.keys())
    for (const t of this.frozenTerms) all.add(t)
    const terms: string[] = []
    const lists: Int32Array[] = []
    let total = 0
    const sorted = [...all].sort()
    yield
    for (let at = 0; at < sorted.length; at++) {
      if (at % TERMS_PER_STEP === TERMS_PER_STEP - 1) yield
      const term = sorted[at]!
      const list = this.postings(term)
      if (!list) continue
      const out = new Int32Array(list instanceof Set ? list.size : list.length)
      let n = 0
      for (const id of list) {
        const row = rowOf[id] ?? 0
        if (row > 0) out[n++] = row
      }
      if (!n) continue
      const kept = out.subarray(0, n).sort()
      terms.push(term)
      lists.push(kept)
      total += n
    }
    const starts = new Int32Array(terms.length + 1)
    const docs = new Int32Array(total)
    lists.forEach((list, t) => {
      docs.set(list, starts[t]!)
      starts[t + 1] = starts[t]! + list.length
    })
    const lengths = new Int32Array(rows + 1)
    for (let id = 1; id < rowOf.length; id++) if (rowOf[id]! > 0) lengths[rowOf[id]!] = this.lengths[id] ?? 0
    return { terms: terms.join('\n'), starts, docs, lengths, average: this.average ?? null }
  }

  static load(saved: SavedField, documents: number): FieldPostings {
    const field = new FieldPostings()
    const terms = saved.terms === '' ? [] : saved.terms.split('\n')
    const { starts, docs, lengths } = saved
    if (!(starts instanceof Int32Array) || !(docs instanceof Int32Array) || !(lengths instanceof Int32Array)) throw new TypeError('postings are not typed arrays')
    if (starts.length !== terms.length + 1 || starts[0] !== 0 || starts[terms.length] !== docs.length || lengths.length !== documents + 1) throw new RangeError('postings do not match their terms')
    for (let t = 0; t < terms.length; t++) {
      if (!(starts[t]! < starts[t + 1]!) || (t > 0 && !(terms[t - 1]! < terms[t]!))) throw new RangeError('terms out of order')
    }
    for (let i = 0; i < docs.length; i++) if (!(docs[i]! >= 1 && docs[i]! <= documents)) throw new RangeError('a posting names no document')
    if (saved.average !== null && typeof saved.average !== 'number') throw new TypeError('no average field length')
    field.frozenTerms = terms
    field.frozenStarts = starts
    field.frozenDocs = docs
    field.lengths = lengths
    field.lengthsBorrowed = true
    field.average = saved.average ?? undefined
    field.frozenCount = documents
    field.frozenGone = new Uint8Array(documents + 1)
    return field
  }

  private frozenTermId(term: string): number {
    const terms = this.frozenTerms
    let lo = 0
    let hi = terms.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      const at = terms[mid]!
      if (at === term) return mid
      if (at < term) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }

  private mutable(term: string): Set<number> | GrowingPostings {
    let live = this.live.get(term)
    if (!live) {
      const t = this.frozenTermId(term)
      live = new GrowingPostings(t < 0 ? new Int32Array(0) : this.frozenDocs.subarray(this.frozenStarts[t]!, this.frozenStarts[t + 1]!))
      this.live.set(term, live)
    }
    return live
  }

  private removable(term: string): Set<number> {
    const live = this.mutable(term)
    if (live instanceof Set) return live
    const set = new Set(live.view())
    this.live.set(term, set)
    return set
  }

  /** A loaded document's terms, from the postings turned around once. */
  private frozenTermsOf(id: number): string[] {
    if (!this.frozenDocStarts) {
      const n = this.frozenCount
      const starts = new Int32Array(n + 2)
      for (const doc of this.frozenDocs) starts[doc + 1]!++
      for (let d = 1; d <= n + 1; d++) starts[d]! += starts[d - 1]!
      const fill = starts.slice()
      const ids = new Int32Array(this.frozenDocs.length)
      for (let t = 0; t < this.frozenTerms.length; t++) {
        for (let i = this.frozenStarts[t]!; i < this.frozenStarts[t + 1]!; i++) ids[fill[this.frozenDocs[i]!]!++] = t
      }
      this.frozenDocStarts = starts
      this.frozenDocTermIds = ids
    }
    const out: string[] = []
    for (let i = this.frozenDocStarts[id]!; i < this.frozenDocStarts[id + 1]!; i++) out.push(this.frozenTerms[this.frozenDocTermIds![i]!]!)
    return out
  }
}

export interface PostingsIndexStore {
  sharedInternalDocumentStore: InternalDocumentIDStore
  /** None: Orama's search reads it. */
  vectorIndexes: Record<string, never>
  /** The string fields, in schema order. */
  properties: string[]
  types: Record<string, SearchableType>
  fields: Record<string, FieldPostings>
}

/** Distinct words whose normalized form the tokenizer remembers, at most. */
const TOKEN_CACHE_LIMIT = 200_000
/** Share of the documents above which a word counts as common (its BM25 idf is then under 0.11). */
const COMMON_SHARE = 0.9

function unsupported(what: string): never {
  throw new Error(`the postings index does not support ${what}`)
}

function createStore(sharedInternalDocumentStore: InternalDocumentIDStore, schema: Record<string, unknown>): PostingsIndexStore {
  const store: PostingsIndexStore = { sharedInternalDocumentStore, vectorIndexes: {}, properties: [], types: {}, fields: {} }
  for (const [prop, type] of Object.entries(schema)) {
    if (type !== 'string') unsupported(`a ${JSON.stringify(type)} field (${prop})`)
    store.properties.push(prop)
    store.types[prop] = 'string'
    store.fields[prop] = new FieldPostings()
  }
  return store
}

/**
 * Whole-word BM25 search: any query word (OR), looked up exactly. `exact`, `tolerance` and
 * `threshold` do not apply. Each document's score sums its words' BM25 in the order Orama's
 * own index sums them (field by field, word by word), so the floating-point result is the same.
 */
function search(store: PostingsIndexStore, term: string, tokenizer: Tokenizer, language: string | undefined, properties: string[], boost: Record<string, number>, relevance: { k: number; b: number; d: number }, docsCount: number, whereFiltersIDs: Set<number> | undefined): TokenScore[] {
  const { ids, scores } = scoreDocuments(store, term, tokenizer, language, properties, boost, relevance, docsCount, whereFiltersIDs)
  return Array.from(ids, (id, i): TokenScore => [id, scores[i]!]).sort((x, y) => y[1] - x[1])
}

/** Matching documents by internal id, in the order first matched, and their scores. */
interface Matches {
  ids: Int32Array
  scores: Float64Array
  /** Per matching document, which of `terms` it holds: bit i for `terms[i]`. */
  masks: Int32Array
  terms: QueryTerm[]
}


/** Query words told apart in a document's mask (bits of an int32, one left for the sign). */
export const MAX_MASKED_TERMS = 31

/**
 * Running sums of one search, by internal id, and which ids have one: kept between searches
 * (a search is synchronous) and left cleared, so a search allocates nothing per document.
 */
let sums = new Float64Array(0)
let summed = new Uint8Array(0)
let masked = new Int32Array(0)

function scoreDocuments(store: PostingsIndexStore, term: string, tokenizer: Tokenizer, language: string | undefined, properties: string[], boost: Record<string, number>, relevance: { k: number; b: number; d: number }, docsCount: number, whereFiltersIDs: Set<number> | undefined): Matches {
  const tokens = [...new Set(tokenizer.tokenize(term, language))]
  const top = store.sharedInternalDocumentStore.internalIdToId.length + 1
  if (sums.length < top) {
    sums = new Float64Array(Math.max(top, sums.length * 2))
    summed = new Uint8Array(sums.length)
    masked = new Int32Array(sums.length)
  }
  const skipped = new Set<number>()
  let touched = new Int32Array(64)
  let size = 0
  const { k, b, d } = relevance
  for (const prop of properties) {
    const field = store.fields[prop]
    if (!field) continue
    const lengths = field.lengths
    const average = field.average as number
    const weight = boost[prop] ?? 1
    const found: { ids: Postings; matching: number; t: number }[] = []
    tokens.forEach((token, t) => {
      const ids = field.postings(token)
      const matching = ids ? (ids instanceof Set ? ids.size : ids.length) : 0
      if (matching > 0) found.push({ ids: ids!, matching, t })
    })
    // A word in nearly every document (a memory's owner, named in all its notes) weighs under a
    // hundredth of a rare one and costs a pass over every document: when the query has a rarer
    // word, such words are left out. Decided from the index alone, so every device agrees.
    const common = (n: number) => n > COMMON_SHARE * docsCount
    const rarer = found.some((f) => !common(f.matching))
    for (const { ids, matching, t } of found) {
      if (rarer && common(matching)) {
        skipped.add(t)
        continue
      }
      const bit = t < MAX_MASKED_TERMS ? 1 << t : 0
      const idf = Math.log(1 + (docsCount - matching + 0.5) / (matching + 0.5))
      for (const id of ids) {
        if (whereFiltersIDs && !whereFiltersIDs.has(id)) continue
        // Orama's tokens are distinct, so a term's frequency is one over the field's length
        const length = lengths[id]!
        const tf = 1 / length
        const bm25 = (idf * (d + tf * (k + 1))) / (tf + k * (1 - b + (b * length) / average))
        // summed in the order Orama's index sums them (field by field, word by word), from 0
        if (!summed[id]) {
          summed[id] = 1
          if (size === touched.length) {
            const grown = new Int32Array(size * 2)
            grown.set(touched)
            touched = grown
          }
          touched[size++] = id
        }
        sums[id] = sums[id]! + bm25 * weight
        masked[id] = masked[id]! | bit
      }
    }
  }
  const ids = touched.slice(0, size)
  const scores = new Float64Array(size)
  const masks = new Int32Array(size)
  const documents = new Int32Array(Math.min(tokens.length, MAX_MASKED_TERMS))
  for (let i = 0; i < size; i++) {
    const id = ids[i]!
    scores[i] = sums[id]!
    masks[i] = masked[id]!
    // a word's documents counted once, whichever fields hold it
    for (let t = 0; t < documents.length; t++) if (masks[i]! & (1 << t)) documents[t]!++
    sums[id] = 0
    summed[id] = 0
    masked[id] = 0
  }
  const terms = Array.from(documents, (n, t) => ({ term: tokens[t]!, documents: skipped.has(t) ? -1 : n }))
  return { ids, scores, masks, terms }
}

/** The normalized scores of a search, reused (every entry read is written first): no array per search as long as its matches. */
let normalized = new Float64Array(0)

/** Orama's BM25 parameters, which its `search` applies when a search names none. */
const RELEVANCE = { k: 1.2, b: 0.75, d: 0.5 }

/**
 * The `k` best documents for `term`, normalized so the best is 1 (`round` applied), best first
 * with ties by id. Scores are those Orama's `search` gives on a database built with these
 * components (the same tokens, statistics and sums, so the same numbers); Orama's search would
 * also sort every match, fetch a document for each and make an array as long as its limit,
 * which a ranking of the best few never reads. Each hit has its id in the database (Orama's
 * internal id) too.
 */
export function bm25Ranked(db: AnyOrama, term: string, properties: string[], boost: Record<string, number>, k: number, round: (score: number) => number, terms?: QueryTerm[]): Bm25Hit[] {
  const store = db.data.index as unknown as PostingsIndexStore
  for (const prop of properties) if (!store.fields[prop]) throw new Error(`no field ${prop} in this index`)
  const found = scoreDocuments(store, term, db.tokenizer as Tokenizer, undefined, properties, boost, RELEVANCE, oramaCount(db), undefined)
  const { ids, scores, masks } = found
  terms?.push(...found.terms)
  let best = 0
  for (const score of scores) if (score > best) best = score
  if (best <= 0) return []
  const keys = db.internalDocumentIDStore.internalIdToId
  if (normalized.length < ids.length) normalized = new Float64Array(Math.max(ids.length, normalized.length * 2))
  for (let i = 0; i < ids.length; i++) normalized[i] = round(scores[i]! / best)
  return rankSlots(normalized, ids.length, k, (i) => keys[ids[i]! - 1]!).map((hit) => ({ key: hit.key, score: hit.score, id: ids[hit.slot]!, terms: masks[hit.slot]! }))
}

/** A document `bm25Ranked` found: its key, normalized score, internal id, and which query words it holds. */
export interface Bm25Hit extends Scored {
  id: number
  /** Bit i set: the document holds the query's i-th word (see `QueryTerm`). */
  terms: number
}

/** Terms saved per step: a few thousand between two looks at the clock (see sync/turns). */
const TERMS_PER_STEP = 64

/** The saved form with documents renumbered by `ids`: the document of internal id `ids[i]` becomes i + 1. */
export function savePostings(store: PostingsIndexStore, ids: ArrayLike<number>): SavedPostings {
  return allSteps(savePostingsInSteps(store, ids))
}

function* savePostingsInSteps(store: PostingsIndexStore, ids: ArrayLike<number>): Steps<SavedPostings> {
  let top = 0
  for (let i = 0; i < ids.length; i++) top = Math.max(top, ids[i]!)
  const rowOf = new Int32Array(top + 1)
  for (let i = 0; i < ids.length; i++) rowOf[ids[i]!] = i + 1
  const fields: Record<string, SavedField> = {}
  for (const prop of store.properties) fields[prop] = yield* store.fields[prop]!.save(rowOf, ids.length)
  return { format: POSTINGS_FORMAT, documents: ids.length, fields }
}

/** Whether `saved` looks like postings of these fields (its arrays are checked on load). */
export function isSavedPostings(saved: unknown, properties: readonly string[]): saved is SavedPostings {
  const s = saved as SavedPostings | null
  if (s?.format !== POSTINGS_FORMAT || !Number.isInteger(s.documents) || s.documents < 0 || typeof s.fields !== 'object' || s.fields === null) return false
  return Object.keys(s.fields).length === properties.length && properties.every((p) => typeof s.fields[p]?.terms === 'string')
}

function loadStore(sharedInternalDocumentStore: InternalDocumentIDStore, raw: unknown): PostingsIndexStore {
  const saved = raw as SavedPostings
  if (saved?.format !== POSTINGS_FORMAT) throw new TypeError('not saved postings')
  const store: PostingsIndexStore = { sharedInternalDocumentStore, vectorIndexes: {}, properties: [], types: {}, fields: {} }
  for (const [prop, field] of Object.entries(saved.fields)) {
    store.properties.push(prop)
    store.types[prop] = 'string'
    store.fields[prop] = FieldPostings.load(field, saved.documents)
  }
  return store
}

/** Orama's own save: documents keep their internal ids (absent ones get no postings). */
function saveStore(store: PostingsIndexStore): SavedPostings {
  const ids: number[] = []
  const count = store.sharedInternalDocumentStore.internalIdToId.length
  for (let id = 1; id <= count; id++) ids.push(id)
  return savePostings(store, ids)
}

export const postingsIndex = {
  create: (_orama: AnyOrama, shared: InternalDocumentIDStore, schema: Record<string, unknown>) => createStore(shared, schema),
  insert(_impl: unknown, store: PostingsIndexStore, prop: string, _id: unknown, internalId: number, value: unknown, _type: unknown, language: string | undefined, tokenizer: Tokenizer, docsCount: number) {
    if (typeof value !== 'string') unsupported('a value that is not a string')
    // Orama's insert skips the tokenizer's cache of normalized words; stemming every word again
    // was most of an insertion. The cache holds one entry per distinct word, cleared when large.
    if (tokenizer.normalizationCache.size > TOKEN_CACHE_LIMIT) tokenizer.normalizationCache.clear()
    store.fields[prop]!.insert(internalId, tokenizer.tokenize(value, language, prop, true), docsCount)
  },
  // the document's terms are its own: the value (which the documents store no longer has) is not needed
  remove(_impl: unknown, store: PostingsIndexStore, prop: string, _id: unknown, internalId: number, _value: unknown, _type: unknown, _language: unknown, _tokenizer: unknown, docsCount: number) {
    store.fields[prop]!.remove(internalId, docsCount)
    return true
  },
  // Orama calls these only from its own insert and remove, which this index replaces
  insertDocumentScoreParameters: () => unsupported('separate score parameters'),
  insertTokenScoreParameters: () => unsupported('separate score parameters'),
  removeDocumentScoreParameters: () => unsupported('separate score parameters'),
  removeTokenScoreParameters: () => unsupported('separate score parameters'),
  calculateResultScores: () => unsupported('separate score parameters'),
  search(store: PostingsIndexStore, term: string, tokenizer: Tokenizer, language: string | undefined, properties: string[], _exact: boolean, _tolerance: number, boost: Record<string, number>, relevance: { k: number; b: number; d: number }, docsCount: number, whereFiltersIDs: Set<number> | undefined) {
    return search(store, term, tokenizer, language, properties, boost, relevance, docsCount, whereFiltersIDs)
  },
  searchByWhereClause: () => unsupported('where filters'),
  getSearchableProperties: (store: PostingsIndexStore) => store.properties,
  getSearchablePropertiesWithTypes: (store: PostingsIndexStore) => store.types,
  load: (shared: InternalDocumentIDStore, raw: unknown) => loadStore(shared, raw),
  save: (store: PostingsIndexStore) => saveStore(store),
} as unknown as IIndex<PostingsIndexStore>

interface PresenceStore {
  sharedInternalDocumentStore: InternalDocumentIDStore
  docs: Record<number, AnyDocument>
  present: Uint8Array
  count: number
}

export interface SavedPresence {
  count: number
  present: Uint8Array
}

/**
 * A documents store that keeps which documents are present and gives back, for any of them, a
 * stand-in with every field empty: Orama reads a document back only to remove it, and the
 * postings index removes by the terms it kept. Search hits carry the stand-in.
 */
export function presenceDocumentsStore(fields: readonly string[]): IDocumentsStore<PresenceStore> {
  const standIn: AnyDocument = Object.freeze(Object.fromEntries(fields.map((f) => [f, ''])))
  const internal = (store: PresenceStore, id: unknown): number => {
    if (typeof id === 'number') return id
    return store.sharedInternalDocumentStore.idToInternalId.get(id as string) ?? 0
  }
  const has = (store: PresenceStore, id: unknown) => store.present[internal(store, id)] === 1
  return {
    create: (_orama, sharedInternalDocumentStore) => ({ sharedInternalDocumentStore, docs: {}, present: new Uint8Array(16), count: 0 }),
    get: (store, id) => (has(store, id) ? standIn : undefined),
    getMultiple: (store, ids) => ids.map((id) => (has(store, id) ? standIn : undefined)),
    getAll: () => unsupported('listing every document'),
    store(store, _id, internalId) {
      if (store.present[internalId] === 1) return false
      if (internalId >= store.present.length) {
        const grown = new Uint8Array(Math.max(internalId + 1, store.present.length * 2))
        grown.set(store.present)
        store.present = grown
      }
      store.present[internalId] = 1
      store.count++
      return true
    },
    remove(store, id) {
      const at = internal(store, id)
      if (store.present[at] !== 1) return false
      store.present[at] = 0
      store.count--
      return true
    },
    count: (store) => store.count,
    load(sharedInternalDocumentStore, raw) {
      const saved = raw as SavedPresence
      if (!(saved?.present instanceof Uint8Array) || !Number.isInteger(saved.count)) throw new TypeError('not a saved presence')
      return { sharedInternalDocumentStore, docs: {}, present: saved.present.slice(), count: saved.count }
    },
    save: (store) => ({ count: store.count, present: store.present.slice() }) as never,
  }
}

/** The presence of documents 1..n, as a restore from rows numbered that way needs. */
function allPresent(n: number): SavedPresence {
  const present = new Uint8Array(n + 1)
  present.fill(1, 1)
  return { count: n, present }
}

/** The postings of an Orama database built with these components, documents numbered by `keys` (their ids) from 1. */
export function saveRows(db: AnyOrama, keys: readonly string[]): SavedPostings {
  return allSteps(saveRowsInSteps(db, keys))
}

/** `saveRows` a step at a time (see core/steps). */
export function* saveRowsInSteps(db: AnyOrama, keys: readonly string[]): Steps<SavedPostings> {
  const ids = new Int32Array(keys.length)
  keys.forEach((key, i) => {
    const id = db.internalDocumentIDStore.idToInternalId.get(key)
    if (id === undefined) throw new RangeError(`no document ${key}`)
    ids[i] = id
  })
  yield
  return yield* savePostingsInSteps(db.data.index as unknown as PostingsIndexStore, ids)
}

/** Fills an empty database built with these components from `saveRows` output and the same keys, in order. */
export function loadRows(db: AnyOrama, saved: SavedPostings, keys: readonly string[], listedTwice?: (key: string) => Error): void {
  if (saved.documents !== keys.length) throw new RangeError(`saved postings of ${saved.documents} documents for ${keys.length} keys`)
  const raw = oramaSave(db)
  oramaLoad(db, { ...raw, internalDocumentIDStore: { internalIdToId: [] }, index: saved, docs: allPresent(keys.length) })
  // the ids as Orama's own load would number them (key i is document i + 1), its map of them
  // built only once inserts, removals or a save ask often (see KeySlots)
  // copies: Orama adds to its list, and the caller may change its own
  db.internalDocumentIDStore.internalIdToId = keys.slice()
  db.internalDocumentIDStore.idToInternalId = new KeySlots(keys.slice(), 1, listedTwice)
}
