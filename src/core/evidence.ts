// What a semantic recall takes as evidence that something answers its query: the query's own
// words, as the indexes analyze them (stemmed, stop words left out), in a note or in an entity's
// name, description or retrieval queries, each word weighted by how rare it is in the memory.
// Nearness of vectors alone is never evidence: it only orders what the words found.

/** A word of the query as one index analyzed it, and how many of its documents hold it. */
export interface QueryTerm {
  term: string
  /** Documents holding it; -1 for a word in nearly every document (not looked at, weighs nothing). */
  documents: number
  /** No document holds it, but one holds a close paraphrase of it (a hybrid memory's word vectors). */
  paraphrased?: boolean
}

/** The query's words in one index (notes, or entities), and how many documents that index holds. */
export interface IndexTerms {
  terms: readonly QueryTerm[]
  size: number
}

/** How well a recall's evidence answers its query. */
export type MatchLevel = 'strong' | 'weak' | 'none'

/**
 * The share of the query's weight that one note or entity must hold for a strong match: most of
 * what the question asks, not one of its words.
 */
export const STRONG_COVERAGE = 0.5

/** What a word held by a close paraphrase counts for, against the word itself: evidence, not proof. */
const PARAPHRASE_CREDIT = 0.5

/** Words of a date ("16", "2023", "june", "1st"): a question's time is matched by when notes were observed, not by their words. */
const TIME_WORD = /^(\d+(st|nd|rd|th)?|[\d.,:/-]+|jan|januari|feb|februari|mar|march|apr|april|may|mai|jun|june|jul|juli|aug|august|sep|sept|septemb|oct|octob|nov|novemb|dec|decemb)$/

/** BM25's idf, as the indexes score a word. */
function idf(documents: number, size: number): number {
  return Math.log(1 + (size - documents + 0.5) / (documents + 0.5))
}

/**
 * The weights of a query's words and the share of them a note or an entity holds. A word's weight
 * is its idf among the notes when notes hold it, else among the entities; a word the memory
 * holds nowhere weighs most, so a question about something absent is never a strong match.
 */
export class QueryEvidence {
  private readonly weight = new Map<string, number>()
  private readonly total: number
  /** Words of the query the memory holds nowhere (date words aside). */
  readonly absent: number
  /** Words of the query that count (date words held nowhere and words in nearly every document aside). */
  readonly counted: number

  constructor(
    private readonly notes: IndexTerms,
    private readonly entities: IndexTerms,
  ) {
    const inNotes = new Map(notes.terms.map((t) => [t.term, t.documents]))
    const inEntities = new Map(entities.terms.map((t) => [t.term, t.documents]))
    const paraphrased = new Set([...notes.terms, ...entities.terms].filter((t) => t.paraphrased).map((t) => t.term))
    const nowhere = idf(0, Math.max(notes.size, entities.size, 1))
    let absent = 0
    for (const term of new Set([...inNotes.keys(), ...inEntities.keys()])) {
      const n = inNotes.get(term) ?? 0
      const e = inEntities.get(term) ?? 0
      // a word in nearly every document tells nothing either way
      if (n < 0 || e < 0) continue
      if (n > 0) this.weight.set(term, idf(n, notes.size))
      else if (e > 0) this.weight.set(term, idf(e, entities.size))
      else if (paraphrased.has(term)) this.weight.set(term, nowhere)
      else if (!TIME_WORD.test(term)) {
        this.weight.set(term, nowhere)
        absent++
      }
    }
    let total = 0
    for (const w of this.weight.values()) total += w
    this.total = total
    this.absent = absent
    this.counted = this.weight.size
  }

  /** Whether the query has any word to judge by (a query of stop words alone has none). */
  get judged(): boolean {
    return this.total > 0
  }

  /**
   * The share, in [0, 1], of the query's weight a note holds: `mask` bit i for its i-th note term,
   * `paraphrases` for the terms it holds only by a close paraphrase, which count half.
   */
  ofNote(mask: number, paraphrases = 0): number {
    return this.share(mask, this.notes.terms) + PARAPHRASE_CREDIT * this.share(paraphrases, this.notes.terms)
  }

  /** The same for an entity's name, description and retrieval queries. */
  ofEntity(mask: number, paraphrases = 0): number {
    return this.share(mask, this.entities.terms) + PARAPHRASE_CREDIT * this.share(paraphrases, this.entities.terms)
  }

  /**
   * The verdict, from the best share one note or entity holds. A query most of whose words the
   * memory holds nowhere, and that names none of its entities, is no match even when one of its
   * other words occurs here: "eigenvalues of a symmetric matrix" is not answered by a note that
   * happens to say "symmetric". A query that names an entity of the memory is at least weak
   * (`namesEntity` is asked only when that decides).
   */
  level(best: number, namesEntity: () => boolean): MatchLevel {
    if (!this.judged || best <= 0) return 'none'
    if (best >= STRONG_COVERAGE) return 'strong'
    if (this.absent * 2 > this.counted && !namesEntity()) return 'none'
    return 'weak'
  }

  private share(mask: number, terms: readonly QueryTerm[]): number {
    if (!mask || !this.total) return 0
    let held = 0
    for (let i = 0; i < terms.length && i < 31; i++) if (mask & (1 << i)) held += this.weight.get(terms[i]!.term) ?? 0
    return Math.min(1, held / this.total)
  }
}
