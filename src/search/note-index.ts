// The index recall ranks observations with, once entities have chosen which may come back:
// BM25 over each note's title and content, fused (with an embedder) with the similarity of the
// note's vector to the query's and a soft word match, in which every query word counts by its
// closest word in the note, so "martial arts" finds a note about karate.

import { count, create, insertMultiple, removeMultiple } from '@orama/orama'
import { MemoryError } from '../core/errors'
import type { Embedder } from './embedder'
import { ScoreScratch } from './score-scratch'
import { ENGLISH_STOP_WORDS } from './stop-words'
import { KeySlots, mapSome } from '../core/key-slots'
import { compareRanked, rankSlots, topKOf, type Scored } from './top-k'
import { quantizeInto, VectorRows } from './vector-rows'
import type { QueryTerm } from '../core/evidence'
import { bm25Ranked, isSavedPostings, MAX_MASKED_TERMS, type Bm25Hit, loadRows, postingsIndex, presenceDocumentsStore, saveRowsInSteps, type SavedPostings } from './postings-index'
import { stepsInTurns } from '../core/steps'
import { textDigest } from './text-digest'
import { wordTokens } from './word-tokens'

export interface NoteDoc {
  slug: string
  /** What is matched: the title and the content. */
  text: string
}

export interface NoteHit {
  slug: string
  /** In [0, 1]; the best note of a query scores 1. */
  score: number
  /** Whether a word of the query (stemmed) is in the note: the soft match alone finds many notes a little. */
  lexical: boolean
  /** Which of the query's words the note holds: bit i for the i-th of the terms `search` reports. */
  terms: number
  /** Which of them it holds only by a close paraphrase (a hybrid index's word vectors), the same bits. */
  paraphrases: number
}

export interface NoteIndex {
  readonly mode: 'bm25' | 'hybrid'
  /** Adds or replaces notes by slug; unchanged text is not re-embedded. */
  upsert(docs: NoteDoc[]): Promise<void>
  remove(slugs: string[]): Promise<void>
  /**
   * The best `limit` notes for a query, best first, ties by slug. `terms`, when given, receives
   * the query's words as this index analyzed them, with how many notes hold each.
   */
  search(query: string, limit: number, terms?: QueryTerm[]): Promise<NoteHit[]>
  /**
   * For each of `texts` (an entity's name, description and queries, say), which of `terms` (the
   * query's words as another index analyzed them) it holds only by a close paraphrase: bit i for
   * terms[i]. Always 0 without an embedder.
   */
  paraphrasesIn(query: string, terms: readonly QueryTerm[], texts: string[]): Promise<number[]>
  /** The words of `text` that match a word of `query` as this index analyzes both (stemmed), each once, in text order: what to highlight. */
  matchingWords(query: string, text: string): string[]
  /**
   * For each of `among`, the cosine of its vector with the mean of the vectors of `seeds` (notes
   * by slug): how like a query's best notes each candidate is, for a second pass over them. Work
   * in proportion to the slugs given. Undefined without an embedder; 0 for a slug not indexed.
   */
  likeness(seeds: readonly string[], among: readonly string[]): Float32Array | undefined
  size(): number
  keys(): string[]
  /** As `EntityIndex.mapKeys`: a restore's maps by slug and by word, a part at a time. */
  mapKeys(count: number): boolean
  /**
   * Structured-clone-able state; restoring it embeds nothing. Made in steps, awaiting `pace`
   * after each (see `stepsInTurns`); nothing may change the index meanwhile.
   */
  snapshot(pace?: () => Promise<void> | undefined): Promise<NoteIndexSnapshot>
}

/** The one format read: a snapshot of any other is unreadable, and the open rebuilds the index from the notes. */
export const NOTE_INDEX_FORMAT = 'cairn-note-index@4'
/** Tokenizer, stop words and fields of the notes' BM25 index; another analysis is rebuilt. */
export const NOTE_TEXT_ANALYSIS = 'orama3-english-stop-whole-word-notes-unsorted@2'

export interface NoteIndexSnapshot {
  format: typeof NOTE_INDEX_FORMAT
  embedder: string | null
  dimensions: number
  analysis: typeof NOTE_TEXT_ANALYSIS
  /**
   * The notes, by slug, and a digest of each one's text: the texts are the observations' own,
   * saved beside the index already, so the index keeps only what tells a changed text apart.
   */
  slugs: string[]
  digests: Float64Array
  /** The BM25 postings, notes numbered from 1 in `slugs` order. */
  text: SavedPostings
  /** One int8 vector per note, in `slugs` order (empty without an embedder), and its scale. */
  vectors: Int8Array
  scales: Float32Array
  /** The words whose vectors the soft match uses, and those vectors (int8, a scale each) in the same order. */
  words: string[]
  wordVectors: Int8Array
  wordScales: Float32Array
  /**
   * Each note's word rows, concatenated in `slugs` order, and how many each has: restoring
   * tokenizes nothing. Two bytes a row while the word table allows, half what an open reads.
   */
  noteWords: Int32Array | Uint16Array
  noteWordCounts: Uint16Array
}

/**
 * Weights of the parts of a note's score, chosen on the LoCoMo dev conversations
 * (`npm run eval -- --locomo`; from soft 2 / vector 0.3, 0.760 -> 0.773 recall@10). BM25 is
 * in [0, 1] with the best note at 1; the soft match and the cosine rarely pass 0.6, so the
 * weights put the three on a similar footing; weighting query words by idf did not help.
 */
export const NOTE_WEIGHTS = { text: 1, soft: 2.5, vector: 0.5 }
/** Candidate notes: the best by BM25 and by vector, this many each (or as many as asked for). */
const SOFT_POOL = 300
/** Of those, how many the soft word match rescores: the best by BM25 and vector together. */
const SOFT_RESCORE = 150
/** Query words the soft match considers. */
const MAX_QUERY_WORDS = 16
/** Words of one text `paraphrasesIn` compares: a description's first words say what it is. */
const MAX_TEXT_WORDS = 64
/** Word vectors `paraphrasesIn` keeps between recalls, at most. */
const UNIT_WORDS_KEPT = 20_000
/** Soft matches weaker than this count as no match: unrelated words are all a little similar. */
const SOFT_FLOOR = 0.35
/**
 * A note word this close to a query word is a close paraphrase of it, evidence as the word itself
 * is (doctor ~ physician 0.77, kids ~ children 0.76, school ~ education 0.73 in the default model;
 * karate ~ martial 0.59 and desk ~ table 0.50 are not).
 */
const PARAPHRASE = 0.7
const SCORE_STEP = 1e9
const STOP = new Set(ENGLISH_STOP_WORDS)

const NO_WORDS = new Uint16Array(0)

/** Orama keeps apostrophes inside words: "Menabrea's" would never match "Menabrea". */
function bm25Text(text: string): string {
  return text.replace(/['\u2019\u02bc]s\b/giu, '').replace(/[\u2018\u2019\u02bc]/gu, "'")
}

function createTextDb() {
  return create({
    schema: { text: 'string' } as const,
    // nothing is sorted by a field: Orama's sort lists would copy every text into the saved index
    sort: { enabled: false },
    components: { tokenizer: { language: 'english', stemming: true, stopWords: [...ENGLISH_STOP_WORDS] }, index: postingsIndex, documentsStore: presenceDocumentsStore(['text']) },
  })
}

export async function createNoteIndex(opts: { embedder?: Embedder } = {}): Promise<NoteIndex> {
  return new HybridNoteIndex(opts.embedder)
}

/** Rebuilds a note index from `snapshot` without embedding anything. */
/**
 * `texts` gives the notes' texts by slug, for when the saved BM25 part must be rebuilt (another
 * analysis, unreadable postings) from a snapshot that keeps only digests; without it such a
 * restore fails.
 */
export async function restoreNoteIndex(saved: NoteIndexSnapshot, opts: { embedder?: Embedder; texts?: (slug: string) => string | undefined } = {}): Promise<NoteIndex> {
  const snapshot = checkSnapshot(saved)
  const embedder = opts.embedder
  if ((snapshot.embedder ?? null) !== (embedder?.id ?? null) || (embedder && embedder.dimensions !== snapshot.dimensions)) {
    throw new MemoryError('config_locked', `The saved note index was built with ${snapshot.embedder ?? 'no embedder'}, not ${embedder?.id ?? 'none'}; rebuild it from the observations.`, { saved: snapshot.embedder, offered: embedder?.id ?? null })
  }
  const index = new HybridNoteIndex(embedder)
  index.load(snapshot, opts.texts)
  return index
}

/** The content words of a text, as the soft match sees them. */
function contentWords(text: string): string[] {
  const out = new Set<string>()
  for (const w of wordTokens(text)) if (!STOP.has(w) && /[\p{L}\p{N}]/u.test(w)) out.add(w)
  return [...out]
}

class HybridNoteIndex implements NoteIndex {
  readonly mode: 'bm25' | 'hybrid'
  private db = createTextDb()
  /**
   * Each slot's slug and the `textDigest` of the text indexed for it, as arrays rather than an
   * object per slot: a restore of 100,000 notes makes none.
   */
  private slugAt: string[] = []
  private digestAt: number[] = []
  /**
   * Rows in the word table of each slot's distinct content words, once set or moved; until then
   * a restored slot's are a view of the snapshot's rows, made when read (see `wordsOf`).
   */
  private wordsSet: (Int32Array | Uint16Array)[] = []
  private loadedWords: Int32Array | Uint16Array = NO_WORDS
  /** Restored slot s has loadedWords[loadedFrom[s] .. loadedFrom[s + 1]]. */
  private loadedFrom = new Int32Array(1)
  /** Slots by slug; a restore's is a map only once asked often (see KeySlots, slotOfHit). */
  private slotOf = new KeySlots()
  private readonly vectors: VectorRows | null
  /** The word table: every content word seen, with its vector (without an embedder, unused), int8 with a scale each. */
  private wordRow = new KeySlots()
  private wordList: string[] = []
  private wordData: Int8Array
  private wordScale: Float32Array
  private queue: Promise<unknown> = Promise.resolve()
  /** The soft match's record of word rows already compared in a search: see softMatch. */
  private simStamp = new Int32Array(0)
  private simAt = new Int32Array(0)
  private stamp = 0
  /** Unit vectors of words `paraphrasesIn` compared, by word (null: the model has none); see `unitVectors`. */
  private unitWords = new Map<string, Float32Array | null>()
  /** A search's per-slot scores, reused between searches. */
  private readonly scratch = new ScoreScratch()

  constructor(private readonly embedder: Embedder | undefined) {
    this.mode = embedder ? 'hybrid' : 'bm25'
    this.vectors = embedder ? new VectorRows(embedder.dimensions) : null
    this.wordData = new Int8Array(embedder ? 1024 * embedder.dimensions : 0)
    this.wordScale = new Float32Array(embedder ? 1024 : 0)
  }

  size(): number {
    return this.slugAt.length
  }

  keys(): string[] {
    return this.slugAt.slice()
  }

  mapKeys(count: number): boolean {
    return mapSome(count, this.slotOf, this.db.internalDocumentIDStore.idToInternalId, this.wordRow)
  }

  upsert(docs: NoteDoc[]): Promise<void> {
    const latest = new Map<string, NoteDoc>()
    for (const doc of docs) latest.set(checkDoc(doc).slug, { slug: doc.slug, text: doc.text })
    return this.exclusive(async () => {
      const digests = new Map([...latest.values()].map((d) => [d.slug, textDigest(d.text)]))
      const changed = [...latest.values()].filter((d) => this.digestAt[this.slotOf.get(d.slug) ?? -1] !== digests.get(d.slug))
      if (!changed.length) return
      const words = changed.map((d) => contentWords(d.text))
      let noteVectors: Float32Array[] = []
      let newWords: string[] = []
      let newWordVectors: Float32Array[] = []
      if (this.embedder) {
        newWords = [...new Set(words.flat())].filter((w) => !this.wordRow.has(w))
        const texts = [...changed.map((d) => d.text), ...newWords]
        const out = await this.embedder.embed(texts)
        if (out.length !== texts.length || out.some((v) => v.length !== this.embedder!.dimensions)) {
          throw new MemoryError('model_failed', `embedder ${this.embedder.id} returned ${out.length} vectors for ${texts.length} texts`)
        }
        noteVectors = out.slice(0, changed.length)
        newWordVectors = out.slice(changed.length)
      }
      // everything below is synchronous, so a search never sees half an upsert
      newWords.forEach((w, i) => this.addWord(w, newWordVectors[i]!))
      const present = changed.map((d) => d.slug).filter((s) => this.slotOf.has(s))
      if (present.length) removeMultiple(this.db, present)
      changed.forEach((doc, i) => {
        const slot = this.slotOf.get(doc.slug) ?? this.slugAt.length
        this.slugAt[slot] = doc.slug
        this.digestAt[slot] = digests.get(doc.slug)!
        this.wordsSet[slot] = this.rowsOfWords(words[i]!)
        this.slotOf.set(doc.slug, slot)
        this.vectors?.set(slot, [noteVectors[i]!])
      })
      insertMultiple(this.db, changed.map((d) => ({ id: d.slug, text: bm25Text(d.text) })))
    })
  }

  remove(slugs: string[]): Promise<void> {
    return this.exclusive(async () => {
      const present = [...new Set(slugs)].filter((s) => this.slotOf.has(s))
      if (!present.length) return
      removeMultiple(this.db, present)
      for (const slug of present) {
        const slot = this.slotOf.get(slug)!
        const last = this.slugAt.length - 1
        this.vectors?.clear(slot)
        if (slot !== last) {
          const moved = this.slugAt[last]!
          this.slugAt[slot] = moved
          this.digestAt[slot] = this.digestAt[last]!
          this.wordsSet[slot] = this.wordsOf(last)
          this.slotOf.set(moved, slot)
          this.vectors?.move(last, slot)
        }
        this.slugAt.pop()
        this.digestAt.pop()
        // the last slot is gone: a slot made there later gets its words set
        if (this.wordsSet.length > last) this.wordsSet.length = last
        this.slotOf.delete(slug)
      }
    })
  }

  async search(query: string, limit: number, terms?: QueryTerm[]): Promise<NoteHit[]> {
    const term = typeof query === 'string' ? query.trim() : ''
    const k = Math.floor(limit)
    if (!term || !(k > 0) || this.slugAt.length === 0) return []
    const pool = Math.max(k, SOFT_POOL)
    const queryWords = contentWords(term).slice(0, MAX_QUERY_WORDS)
    const embedded = this.embedder ? await this.embedder.embed([term, ...queryWords]) : []
    // kept for a paraphrase check of the same query's entities (see paraphrasesIn)
    if (this.embedder && this.unitWords.size + queryWords.length <= UNIT_WORDS_KEPT) queryWords.forEach((w, i) => this.unitWords.set(w, unitOf(embedded[i + 1]!, this.embedder!.dimensions)))
    // synchronous from here: slots cannot move under the scan
    const n = this.slugAt.length
    const text = this.scratch.zeroed(0, n)
    const textSlots: number[] = []
    const held = new Map<string, number>()
    const analyzed: QueryTerm[] = []
    for (const hit of this.textHits(term, pool, analyzed)) {
      const slot = this.slotOfHit(hit)
      if (hit.score > 0) textSlots.push(slot)
      text[slot] = hit.score
      held.set(hit.key, hit.terms)
    }
    terms?.push(...analyzed)
    if (!this.embedder) return topKOf(text, n, k, (s) => this.slugAt[s]!).map((h) => ({ slug: h.key, score: h.score, lexical: true, terms: held.get(h.key) ?? 0, paraphrases: 0 }))
    const similarity = this.scratch.zeroed(1, n)
    this.vectors!.maxSimilarity(embedded[0]!, similarity)
    const w = NOTE_WEIGHTS
    const candidates = new Set<number>(textSlots)
    for (const hit of rankSlots(similarity, n, pool, (s) => this.slugAt[s]!)) candidates.add(hit.slot)
    // the soft match, the dearest part, rescores only the best candidates by words and vector
    const listed = [...candidates]
    const before = Float64Array.from(listed, (s) => w.text * text[s]! + w.vector * Math.max(0, similarity[s]!) + 1e-6)
    const rescored = rankSlots(before, listed.length, SOFT_RESCORE, (i) => this.slugAt[listed[i]!]!)
    // each query word's bit among the analyzed terms, for the words a note holds by a close paraphrase
    const bits = queryWords.map((w) => this.termBit(analyzed, w))
    const { soft, paraphrased } = this.softMatch(embedded.slice(1), bits, new Set(rescored.map((h) => listed[h.slot]!)))
    // a word held only by paraphrase is not absent from the memory
    let anyParaphrase = 0
    for (const mask of paraphrased.values()) anyParaphrase |= mask
    analyzed.forEach((t, i) => {
      if (i < MAX_MASKED_TERMS && anyParaphrase & (1 << i)) t.paraphrased = true
    })
    const fused = new Map<number, number>()
    let best = 0
    for (const s of candidates) {
      const score = w.text * text[s]! + w.soft * (soft.get(s) ?? 0) + w.vector * similarity[s]!
      fused.set(s, score)
      if (score > best) best = score
    }
    if (best <= 0) return []
    const hits: Scored[] = []
    const lexical = new Set<string>()
    const close = new Map<string, number>()
    for (const [s, score] of fused) {
      if (score <= 0) continue
      const slug = this.slugAt[s]!
      hits.push({ key: slug, score: round(score / best) })
      if (text[s]! > 0) lexical.add(slug)
      const near = paraphrased.get(s)
      if (near) close.set(slug, near)
    }
    return hits.sort(compareRanked).slice(0, k).map((h) => {
      const terms = held.get(h.key) ?? 0
      return { slug: h.key, score: h.score, lexical: lexical.has(h.key), terms, paraphrases: (close.get(h.key) ?? 0) & ~terms }
    })
  }

  matchingWords(query: string, text: string): string[] {
    const tokenizer = this.db.tokenizer
    const wanted = new Set(tokenizer.tokenize(bm25Text(query), 'english'))
    const out = new Set<string>()
    for (const word of text.split(/[^\p{L}\p{N}'\u2019]+/u)) {
      if (!word || out.has(word)) continue
      const analyzed = tokenizer.tokenize(bm25Text(word), 'english')
      if (analyzed.length && analyzed.every((t) => wanted.has(t))) out.add(word)
    }
    return [...out]
  }

  likeness(seeds: readonly string[], among: readonly string[]): Float32Array | undefined {
    const vectors = this.vectors
    if (!vectors) return undefined
    const d = vectors.dimensions
    const out = new Float32Array(among.length)
    const mean = new Float32Array(d)
    for (const slug of seeds) {
      const slot = this.slotOf.get(slug)
      if (slot !== undefined) for (const v of vectors.vectorsOf(slot)) for (let i = 0; i < d; i++) mean[i] = mean[i]! + v[i]!
    }
    const centre = unitOf(mean, d)
    if (!centre) return out
    // the notes' vectors are of unit length (as the query's similarity takes them): a dot product is their cosine
    for (let j = 0; j < among.length; j++) {
      const slot = this.slotOf.get(among[j]!)
      if (slot !== undefined) out[j] = vectors.bestDot(slot, centre)
    }
    return out
  }

  async paraphrasesIn(query: string, terms: readonly QueryTerm[], texts: string[]): Promise<number[]> {
    const none = texts.map(() => 0)
    if (!this.embedder || !texts.length) return none
    const queryWords = contentWords(query).slice(0, MAX_QUERY_WORDS).map((w) => ({ w, bit: this.termBit(terms, w) })).filter((q) => q.bit)
    if (!queryWords.length) return none
    const textWords = texts.map((t) => contentWords(t).slice(0, MAX_TEXT_WORDS))
    await this.unitVectors([...queryWords.map((q) => q.w), ...textWords.flat()])
    const asked = queryWords.map((q) => ({ bit: q.bit, v: this.unitWords.get(q.w) }))
    const dims = this.embedder.dimensions
    return textWords.map((words) => {
      let mask = 0
      for (const w of words) {
        const v = this.unitWords.get(w)
        if (!v) continue
        for (const q of asked) {
          if (!q.v || mask & q.bit) continue
          let dot = 0
          for (let i = 0; i < dims; i++) dot += v[i]! * q.v[i]!
          if (dot >= PARAPHRASE) mask |= q.bit
        }
      }
      return mask
    })
  }

  /** The bit of `word` among `terms` (a query's words as an index analyzed them), analyzed once; 0 when it is none of them. */
  private termBit(terms: readonly QueryTerm[], word: string): number {
    const analyzed = this.db.tokenizer.tokenize(bm25Text(word), 'english')[0]
    const at = terms.findIndex((t) => t.term === analyzed)
    return at >= 0 && at < MAX_MASKED_TERMS ? 1 << at : 0
  }

  /**
   * Puts the unit vector of each of `words` in `unitWords`: from the word table where it has the
   * word, else embedded, all missing ones in one call. Bounded: cleared when it grows large.
   */
  private async unitVectors(words: string[]): Promise<void> {
    const dims = this.embedder!.dimensions
    const missing = [...new Set(words.filter((w) => !this.unitWords.has(w)))]
    if (!missing.length) return
    if (this.unitWords.size + missing.length > UNIT_WORDS_KEPT) this.unitWords.clear()
    const embedding = missing.filter((w) => !this.wordRow.has(w))
    const embedded = embedding.length ? await this.embedder!.embed(embedding) : []
    const fresh = new Map(embedding.map((w, i) => [w, embedded[i]!]))
    for (const w of missing) {
      const row = this.wordRow.get(w)
      const v: ArrayLike<number> = row === undefined ? fresh.get(w)! : Array.from(this.wordData.subarray(row * dims, (row + 1) * dims), (x) => x * this.wordScale[row]!)
      this.unitWords.set(w, unitOf(v, dims))
    }
  }

  async snapshot(pace: () => Promise<void> | undefined = () => undefined): Promise<NoteIndexSnapshot> {
    await this.queue.catch(() => undefined)
    const dims = this.embedder?.dimensions ?? 0
    const n = this.slugAt.length
    const text = await stepsInTurns(saveRowsInSteps(this.db, this.slugAt), pace)
    const rows = this.vectors?.export(n)
    const words = Array.from({ length: n }, (_, s) => this.wordsOf(s))
    return {
      format: NOTE_INDEX_FORMAT, embedder: this.embedder?.id ?? null, dimensions: dims, analysis: NOTE_TEXT_ANALYSIS,
      slugs: this.keys(), digests: Float64Array.from(this.digestAt), text,
      vectors: rows?.data ?? new Int8Array(0), scales: rows?.scales ?? new Float32Array(0),
      words: [...this.wordList], wordVectors: this.wordData.slice(0, this.wordList.length * dims), wordScales: this.wordScale.slice(0, this.wordList.length),
      noteWords: concatRows(words, this.wordList.length), noteWordCounts: Uint16Array.from(words, (w) => w.length),
    }
  }

  load(snapshot: NoteIndexSnapshot, given?: (slug: string) => string | undefined): void {
    if (this.slugAt.length) throw new Error('load needs an empty note index')
    const slugs = snapshot.slugs
    this.slugAt = slugs.slice()
    this.digestAt = Array.from(snapshot.digests)
    if (this.embedder) {
      this.loadWords(snapshot)
      // the snapshot's rows are read in place: restoring makes no array per note
      const counts = snapshot.noteWordCounts
      const from = new Int32Array(counts.length + 1)
      for (let slot = 0; slot < counts.length; slot++) from[slot + 1] = from[slot]! + counts[slot]!
      this.loadedWords = snapshot.noteWords
      this.loadedFrom = from
    }
    // a slug listed twice is a corrupt snapshot: found when the map is first built
    const listedTwice = (slug: string) => corrupt(`slug "${slug}" appears twice`)
    this.slotOf = new KeySlots(slugs, 0, listedTwice)
    this.vectors?.load({ rowCounts: new Uint16Array(slugs.length).fill(1), data: snapshot.vectors, scales: snapshot.scales })
    if (snapshot.analysis === NOTE_TEXT_ANALYSIS && isSavedPostings(snapshot.text, ['text'])) {
      try {
        loadRows(this.db, snapshot.text, this.slugAt, listedTwice)
        if (count(this.db) === this.slugAt.length) return
      } catch {
        // fall through to a rebuild
      }
    }
    // postings of another analysis, or unreadable ones, are rebuilt from the notes' texts, as
    // given. A text given now may differ from the one indexed; its entry keeps the saved
    // digest, so the next upsert of it indexes it again.
    const rows = given ? slugs.map((slug) => given(slug) ?? '') : undefined
    if (!rows) throw corrupt('the postings do not match the notes')
    this.db = createTextDb()
    insertMultiple(this.db, this.slugAt.map((slug, slot) => ({ id: slug, text: bm25Text(rows[slot]!) })))
  }

  /**
   * Per candidate note: the mean, over the query's words, of each word's best cosine with a
   * word of the note (below SOFT_FLOOR counts 0). Each query word is compared once with each
   * distinct word of the candidates, not once per note.
   */
  private softMatch(queryVectors: Float32Array[], queryBits: number[], candidates: Set<number>): { soft: Map<number, number>; paraphrased: Map<number, number> } {
    const out = new Map<number, number>()
    const paraphrased = new Map<number, number>()
    const knownAt = queryVectors.flatMap((v, j) => (v.some((x) => x !== 0) ? [j] : []))
    const known = knownAt.map((j) => queryVectors[j]!)
    const knownBits = knownAt.map((j) => queryBits[j] ?? 0)
    if (!known.length) return { soft: out, paraphrased }
    const d = this.embedder!.dimensions
    const q = known.length
    const data = this.wordData
    const scale = this.wordScale
    // which word rows this search has compared, and where their similarities are: arrays by
    // row kept between searches, told apart by a stamp, rather than a map filled per search
    const words = this.wordList.length
    if (this.simStamp.length < words) {
      this.simStamp = new Int32Array(Math.max(words, this.simStamp.length * 2))
      this.simAt = new Int32Array(this.simStamp.length)
    }
    if (this.stamp === 0x7fffffff) {
      this.simStamp.fill(0)
      this.stamp = 0
    }
    const stamp = ++this.stamp
    const seen = this.simStamp
    const at = this.simAt
    let sims = new Float32Array(q * 1024)
    let compared = 0
    const best = new Float32Array(q)
    for (const s of candidates) {
      const rows = this.wordsOf(s)
      best.fill(0)
      for (const row of rows) {
        if (seen[row] !== stamp) {
          if ((compared + 1) * q > sims.length) {
            const grown = new Float32Array(sims.length * 2)
            grown.set(sims)
            sims = grown
          }
          const base = row * d
          const to = compared * q
          // two query words per pass over the row: each of its values is read once for both
          for (let j = 0; j < q; j += 2) {
            const v = known[j]!
            const w = known[j + 1]
            let dot = 0
            if (w) {
              let other = 0
              for (let i = 0; i < d; i++) {
                const x = data[base + i]!
                dot += x * v[i]!
                other += x * w[i]!
              }
              sims[to + j + 1] = other * scale[row]!
            } else {
              for (let i = 0; i < d; i++) dot += data[base + i]! * v[i]!
            }
            sims[to + j] = dot * scale[row]!
          }
          seen[row] = stamp
          at[row] = compared++
        }
        const from = at[row]! * q
        for (let j = 0; j < q; j++) if (sims[from + j]! > best[j]!) best[j] = sims[from + j]!
      }
      let sum = 0
      let close = 0
      for (let j = 0; j < q; j++) {
        if (best[j]! >= SOFT_FLOOR) sum += best[j]!
        if (best[j]! >= PARAPHRASE) close |= knownBits[j]!
      }
      if (sum > 0) out.set(s, sum / q)
      if (close) paraphrased.set(s, close)
    }
    return { soft: out, paraphrased }
  }


  /** The word rows of `slot`: set ones, or a restored slot's view of the snapshot's rows. */
  private wordsOf(slot: number): Int32Array | Uint16Array {
    const set = this.wordsSet[slot]
    if (set) return set
    const from = this.loadedFrom
    return slot + 1 < from.length ? this.loadedWords.subarray(from[slot]!, from[slot + 1]!) : NO_WORDS
  }

  private addWord(word: string, vector: Float32Array): void {
    // a word the model has no vector for (a number, a name it never saw) can never pass the soft
    // floor: kept, it would cost a row in the table and in every note that has it
    if (this.wordRow.has(word) || !vector.some((x) => x !== 0)) return
    const row = this.wordList.length
    this.reserveWords(row + 1)
    this.wordScale[row] = quantizeInto(vector, this.wordData, row * this.embedder!.dimensions)
    this.wordList.push(word)
    this.wordRow.set(word, row)
  }

  /** Takes the word table of a checked snapshot into an empty index as it is. */
  private loadWords(snapshot: NoteIndexSnapshot): void {
    const n = snapshot.words.length
    this.reserveWords(n)
    this.wordData.set(snapshot.wordVectors)
    this.wordScale.set(snapshot.wordScales)
    this.wordList = snapshot.words.slice()
    this.wordRow = new KeySlots(snapshot.words, 0, (w) => corrupt(`word "${w}" appears twice`))
  }

  private reserveWords(rows: number): void {
    const d = this.embedder!.dimensions
    if (rows <= this.wordScale.length) return
    const capacity = Math.max(rows, this.wordScale.length * 2)
    const data = new Int8Array(capacity * d)
    data.set(this.wordData)
    const scale = new Float32Array(capacity)
    scale.set(this.wordScale)
    this.wordData = data
    this.wordScale = scale
  }

  private rowsOfWords(words: string[]): Int32Array | Uint16Array {
    if (!this.embedder) return new Int32Array(0)
    const rows = words.map((w) => this.wordRow.get(w)!).filter((r) => r !== undefined)
    // the same kind of array as a restore's: one shape for the soft match to read
    const out = wordRows(rows.length, this.wordList.length)
    out.set(rows)
    return out
  }

  /** BM25 hits, normalized so the best is 1, best first and ties by slug. */
  private textHits(term: string, k: number, terms?: QueryTerm[]): Bm25Hit[] {
    // every match as Orama's search scores it; ties are cut by slug here, since Orama breaks
    // them by insertion order, which differs between devices
    return bm25Ranked(this.db, bm25Text(term), ['text'], {}, k, round, terms)
  }

  /**
   * A text hit's slot. Until anything changes after a restore, a note's id in the BM25 index is
   * its slot + 1 (the restore numbered them so): a recall right after an open looks no slug up.
   */
  private slotOfHit(hit: { key: string; id: number }): number {
    return this.slotOf.asRestored ? hit.id - 1 : this.slotOf.get(hit.key)!
  }

  private exclusive(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => undefined)
    return run
  }
}

/** Room for `length` word rows of a table of `words` rows: two bytes each while every row number fits. */
function wordRows(length: number, words: number): Int32Array | Uint16Array {
  return words <= 0x10000 ? new Uint16Array(length) : new Int32Array(length)
}

/** The rows one after another (see `wordRows`). */
function concatRows(rows: Array<Int32Array | Uint16Array>, words: number): Int32Array | Uint16Array {
  const out = wordRows(rows.reduce((n, r) => n + r.length, 0), words)
  let at = 0
  for (const r of rows) {
    out.set(r, at)
    at += r.length
  }
  return out
}

/** `v` scaled to length 1; null for a zero vector (a word the model does not know). */
function unitOf(v: ArrayLike<number>, dims: number): Float32Array | null {
  let norm = 0
  for (let i = 0; i < dims; i++) norm += v[i]! * v[i]!
  if (!(norm > 0)) return null
  const scale = 1 / Math.sqrt(norm)
  return Float32Array.from({ length: dims }, (_, i) => v[i]! * scale)
}

function round(score: number): number {
  return Math.round(score * SCORE_STEP) / SCORE_STEP
}

function checkDoc(doc: NoteDoc): NoteDoc {
  if (typeof doc?.slug !== 'string' || !doc.slug || typeof doc.text !== 'string') throw new MemoryError('invalid_request', 'an indexed note needs a slug and a text', { slug: (doc as { slug?: unknown } | null)?.slug })
  return doc
}

/** A snapshot of this format whose parts fit together, or `storage_failed`. */
function checkSnapshot(s: NoteIndexSnapshot): NoteIndexSnapshot {
  if (s?.format !== NOTE_INDEX_FORMAT) throw corrupt(`unknown format ${String((s as { format?: unknown } | null)?.format)}`)
  const kept = s.slugs
  if ((!Array.isArray(s.slugs) || !s.slugs.every((slug) => typeof slug === 'string' && slug) || !(s.digests instanceof Float64Array) || s.digests.length !== s.slugs.length)) throw corrupt('missing notes or their digests')
  if (!Array.isArray(kept) || !(s.vectors instanceof Int8Array) || !(s.scales instanceof Float32Array) || !Array.isArray(s.words) || !(s.wordVectors instanceof Int8Array) || !(s.wordScales instanceof Float32Array)) throw corrupt('missing notes or vectors')
  const notes = s.embedder ? kept.length : 0
  const words = s.embedder ? s.words.length : 0
  if (s.vectors.length !== notes * s.dimensions || s.scales.length !== notes || s.wordVectors.length !== words * s.dimensions || s.wordScales.length !== words) throw corrupt('vector counts do not match the notes')
  if (!(s.noteWords instanceof Int32Array || s.noteWords instanceof Uint16Array) || !(s.noteWordCounts instanceof Uint16Array) || s.noteWordCounts.length !== kept.length) throw corrupt('missing the notes\' words')
  const rows = s.noteWordCounts.reduce((n, c) => n + c, 0)
  if (rows !== s.noteWords.length) throw corrupt('the notes\' words do not match the word table')
  const known = s.words.length
  // an indexed loop: for-of over a typed array of millions of rows is many times slower
  const noteWords = s.noteWords
  for (let i = 0; i < noteWords.length; i++) {
    const r = noteWords[i]!
    if (r < 0 || r >= known) throw corrupt('the notes\' words do not match the word table')
  }
  return s
}

function corrupt(why: string): MemoryError {
  return new MemoryError('storage_failed', `The saved note index is unreadable (${why}); rebuild it from the observations.`, { why })
}
