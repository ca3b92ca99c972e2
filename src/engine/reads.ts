// Reads of an open memory: never queued, they see the last committed state, reading from storage
// the notes an open left there as they need them.
import { MemoryError } from '../core/errors'
import { QueryEvidence, type QueryTerm } from '../core/evidence'
import { graphSlice, type GraphSlice, type GraphSliceOptions } from '../core/graph-slice'
import { normalizeName } from '../core/normalize'
import { assembleSemantic, assembleStructural, DEFAULT_TUNING, draftSemantic, parseRecallRequest, type RecallFilter, type RecallTuning } from '../core/recall'
import type { Alias, AppendixFile, EntityDetail, MergeProposal, Observation, RecallResult, RecallSignals, RecalledRelationship, Relationship } from '../core/types'
import { historyOf, splitTimeRequest, TimeView, type TimeRequest } from '../core/validity'
import type { RankedEntity } from '../search/entity-index'
import type { FirstSyncProgress } from '../sync/first-sync'
import { stored } from '../store/storage-error'
import { describe, type Committer } from './committer'

/** Entities an index query asks for beyond the cap, so filters and expansion have room. */
const SEARCH_HEADROOM = 4
/** Notes the note index offers a recall: enough to reach past the entities' own cap. */
const NOTE_CANDIDATES = 300
/** Entities found by vector alone that a semantic recall checks for a close paraphrase of the query. */
const PARAPHRASE_CANDIDATES = 8

export class Reads {
  /** The weights of a note's score: the eval measures others through `engineOf`; nothing else sets it. */
  tuning: Readonly<RecallTuning> = DEFAULT_TUNING
  /** A first sync arriving in pieces (see SyncPort.receiving): recall says it answers from part of the memory. */
  receiving: FirstSyncProgress | null = null

  constructor(private readonly c: Committer) {}

  async recall(request: unknown): Promise<RecallResult> {
    this.c.assertOpen()
    // as things stood when asked: the answer holds at least the pieces that had arrived then
    const receiving = this.receiving
    const { time, rest } = splitTimeRequest(request)
    const f = parseRecallRequest(rest)
    const within = await this.timeView(time)
    if (within) f.within = within
    const result = countLeftOut(await this.recallWithin(f), within)
    if (receiving) result.syncing = { ...receiving }
    return result
  }

  /** One recall's view of time, or none when nothing needs filtering or marking. */
  private async timeView(time: TimeRequest): Promise<TimeView | undefined> {
    const timeline = await this.c.timelineReady()
    if (timeline.empty && time.asOf === undefined) return undefined
    return new TimeView(timeline, this.c.graph, time, this.c.clock())
  }

  private async recallWithin(f: RecallFilter): Promise<RecallResult> {
    const { graph, loader, index, notes, info } = this.c
    if (!f.query) return loader.withNotes(() => assembleStructural(graph, f, info.retrieval.snippetLength), () => [])
    loader.recallStarted()
    try {
      // the note index first: it embeds the query with its words, the entity index then reuses the query's vector
      const noteTerms: QueryTerm[] = []
      const entityTerms: QueryTerm[] = []
      const noteHits = await notes.search(f.query, Math.max(f.limits.observations, NOTE_CANDIDATES), noteTerms)
      const hits = await index.search(f.query, Math.max(f.limits.entities * SEARCH_HEADROOM, 20), undefined, entityTerms)
      await this.findParaphrases(f.query, hits, entityTerms)
      const evidence = new QueryEvidence({ terms: noteTerms, size: notes.size() }, { terms: entityTerms, size: index.size() })
      const signals = this.signals()
      const likeness = (seeds: readonly string[], among: readonly string[]) => notes.likeness(seeds, among)
      const assemble = () => ({ ...assembleSemantic(graph, hits, noteHits, evidence, f, info.retrieval.snippetLength, this.tuning, likeness), signals })
      if (graph.notesInStorage === 0) return assemble()
      // Ranked first, by what the open saved (slugs, times, backing): the texts of only the notes
      // it shows are then read, and the recall is not ranked again. A change committed during
      // the read ranks it again.
      const version = this.c.version
      const draft = await loader.withNotes(() => draftSemantic(graph, hits, noteHits, evidence, f, info.retrieval.snippetLength, this.tuning, likeness), () => [])
      await loader.readSome(graph.notesInStorageAmong(draft.shown))
      return this.c.version === version ? { ...(await loader.withNotes(() => draft.complete(), () => [])), signals } : await loader.withNotes(assemble, () => [])
    } finally {
      loader.recallEnded()
    }
  }

  /**
   * The best few entities found by vector alone may still hold the query by a close paraphrase
   * ("physician" for "doctor"): that is evidence, as the word itself is. Marks them, and the
   * query's words so held.
   */
  private async findParaphrases(query: string, hits: RankedEntity[], terms: QueryTerm[]): Promise<void> {
    const { graph } = this.c
    if (this.c.index.mode !== 'hybrid') return
    const unheld = hits.filter((h) => h.terms === 0 && graph.entities.has(h.key)).slice(0, PARAPHRASE_CANDIDATES)
    if (!unheld.length) return
    const texts = unheld.map((h) => {
      const e = graph.entities.get(h.key)!
      return [e.name, e.description, ...e.descriptions, ...e.queries].join('\n')
    })
    const masks = await this.c.notes.paraphrasesIn(query, terms, texts)
    let any = 0
    unheld.forEach((h, i) => {
      if (masks[i]) h.paraphrases = masks[i]
      any |= masks[i]!
    })
    terms.forEach((t, i) => {
      if (i < 31 && any & (1 << i)) t.paraphrased = true
    })
  }

  /** What ranks this memory's semantic recalls: words, and vectors of its frozen model in a hybrid memory. */
  private signals(): RecallSignals {
    return this.c.index.mode === 'hybrid' ? { words: true, vectors: true, model: this.c.info.retrieval.embedder } : { words: true, vectors: false }
  }

  /**
   * Every note whose own text holds a word of `text` (stemmed, as recall matches words), best
   * first, each with the words of it that match: the Notes screen's search, linked or not.
   */
  async findNotes(text: string, limit: number): Promise<Array<{ slug: string; words: string[] }>> {
    this.c.assertOpen()
    const { graph, notes } = this.c
    const hits = (await notes.search(text, limit)).filter((h) => h.terms !== 0)
    return hits.flatMap((h) => {
      const o = graph.getObservation(h.slug)
      return o ? [{ slug: h.slug, words: notes.matchingWords(text, `${o.title}\n${o.content}`) }] : []
    })
  }

  /** The notes backing the entity `name` names (none for a name that names none), to read them ahead. */
  notesOfName(name: unknown): readonly string[] {
    if (typeof name !== 'string' || !normalizeName(name)) return []
    return this.c.graph.entities.get(this.c.graph.resolveName(name))?.observations ?? []
  }

  getObservation(slug: unknown): Observation {
    this.c.assertOpen()
    return structuredClone(this.c.requireObservation(slug))
  }

  /** A bounded piece of the entity graph for drawing; see core/graph-slice. */
  graphSlice(opts: GraphSliceOptions = {}): GraphSlice {
    this.c.assertOpen()
    if (opts.center !== undefined && (typeof opts.center !== 'string' || !normalizeName(opts.center))) {
      throw new MemoryError('invalid_request', 'graphSlice center must be an entity name')
    }
    return graphSlice(this.c.graph, opts)
  }

  inspect(name: unknown): EntityDetail {
    this.c.assertOpen()
    const { graph } = this.c
    if (typeof name !== 'string' || !normalizeName(name)) throw new MemoryError('invalid_request', 'inspect takes an entity name')
    const key = graph.resolveName(name)
    const entity = graph.entities.get(key)
    if (!entity) throw new MemoryError('not_found', `no entity named "${name}"; recall with a query to find similar names`, { name })
    const edges = graph.edgesOf(key)
    const aliases = [...graph.aliasMap()].filter(([, c]) => c === key).map(([v]) => v).sort()
    const timeline = this.c.timelineNow()
    // every edge is listed; one that no longer holds now is marked, as history: 'all' marks it
    const now = timeline && !timeline.empty ? new TimeView(timeline, graph, { history: 'all' }, this.c.clock()) : undefined
    const shown = (r: Relationship): RecalledRelationship => ({ ...graph.present(r), ...now?.edgeMarks(r) })
    return {
      entity: structuredClone(entity),
      outgoing: edges.filter((r) => r.source === key).map(shown),
      incoming: edges.filter((r) => r.target === key).map(shown),
      observations: entity.observations.map((s) => graph.getObservation(s)!).map(({ slug, title, observedAt, category }) => ({ slug, title, observedAt, category })),
      aliases,
      history: historyOf(entity.observations.map((s) => graph.getObservation(s)!), timeline, this.c.clock()),
    }
  }

  listFiles(): AppendixFile[] {
    this.c.assertOpen()
    return [...this.c.files.values()].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => ({ ...f }))
  }

  async readFile(path: unknown): Promise<{ file: AppendixFile; data: Uint8Array }> {
    this.c.assertOpen()
    const file = typeof path === 'string' ? this.c.files.get(path) : undefined
    if (!file) throw new MemoryError('not_found', `no appendix file at ${describe(path)}; listFiles shows what exists`, { path: describe(path) })
    const row = await this.c.db.fileBytes.get(file.path)
    if (!row) throw new MemoryError('not_found', `the bytes of "${file.path}" are missing`, { path })
    return { file: { ...file }, data: row.data }
  }

  listProposals(): MergeProposal[] {
    this.c.assertOpen()
    return [...this.c.proposals.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
  }

  /** The alias rows as stored, with the time each merge was recorded. */
  storedAliases(): Promise<Alias[]> {
    this.c.assertOpen()
    return stored(() => this.c.db.aliases.toArray())
  }
}

/** A recall's count of the notes its view of time left out, when it left any. */
function countLeftOut(result: RecallResult, within: TimeView | undefined): RecallResult {
  if (within?.leftOut) result.superseded = within.leftOut
  return result
}
