// Creating and opening memories: the retrieval config is frozen at creation and checked at every
// open, and an open takes the graph and the indexes as saved when they are current.
import { MemoryError } from '../core/errors'
import { DERIVATION_RULES, Graph } from '../core/graph'
import { BM25_ONLY, type ConnectionRecord, type MemoryInfo, type Observation, type RetrievalConfig } from '../core/types'
import type { NoteShelf } from '../core/note-shelf'
import { NoteInStorage } from '../core/note-shelf'
import type { Embedder } from '../search/embedder'
import { createEntityIndex, restoreEntityIndex, type EntityDoc, type EntityIndex } from '../search/entity-index'
import { createNoteIndex, restoreNoteIndex, type NoteIndex } from '../search/note-index'
import { rememberRecentTexts } from '../search/recent-texts'
import { saveMeta, saveNewMemory } from '../store/commit'
import { MemoryDB, RegistryDB } from '../store/db'
import { DERIVATION_KEY, importUnderway, rollBackImport, writeDerivedInPieces } from '../store/import-pieces'
import type { IndexedDBFactory } from '../store/indexeddb-factory'
import { unpackIndex, unpackOpenState, type SavedIndex } from '../store/open-state'
import { storageError, stored } from '../store/storage-error'
import { isLabel, isMemoryId, MEMORY_NAME_RULE, visibilityProblem } from '../core/identifiers'
import { SNIPPET_LENGTH } from '../core/limits'
import { entityDoc, noteDoc } from './committer'
import { MemoryEngine } from './memory-engine'
import { readNotesInto } from './note-loading'
import { nameBlocksOf, noteSource, readForOpen, readObservations } from './open-read'
import { randomId } from './tokens'
import type { CreateMemoryOptions, OpenMemoryOptions } from './memory-options'

export type { CreateMemoryOptions, OpenMemoryOptions } from './memory-options'

function retrievalConfig(partial: Partial<RetrievalConfig> | undefined, given: Embedder | undefined): RetrievalConfig {
  if (partial?.embedder && partial.embedder !== BM25_ONLY && (!given || given.id !== partial.embedder)) {
    throw new MemoryError('invalid_request', `retrieval.embedder "${partial.embedder}" needs that embedder passed as options.embedder`)
  }
  // an explicit BM25-only config wins over an embedder passed along (a joined memory keeps its config)
  const embedder = partial?.embedder === BM25_ONLY ? undefined : given
  // 0.4 tuned on the WordNet dev split (npm run eval)
  const vector = embedder ? (partial?.weights?.vector ?? 0.4) : 0
  const snippetLength = partial?.snippetLength ?? SNIPPET_LENGTH.default
  if (!Number.isInteger(snippetLength) || snippetLength < SNIPPET_LENGTH.min || snippetLength > SNIPPET_LENGTH.max) {
    throw new MemoryError('invalid_request', `retrieval.snippetLength must be a whole number from ${SNIPPET_LENGTH.min} to ${SNIPPET_LENGTH.max}`)
  }
  if (!(vector >= 0 && vector <= 1)) throw new MemoryError('invalid_request', 'retrieval.weights.vector must be from 0 to 1')
  return {
    embedder: embedder?.id ?? BM25_ONLY,
    modelChecksum: embedder?.checksum ?? '',
    dimensions: embedder?.dimensions ?? 0,
    weights: { text: 1 - vector, vector },
    snippetLength,
  }
}

/** A new memory's engine, with its registry row and database made; fails with `conflict` if the id is taken. */
export async function createEngine(opts: CreateMemoryOptions): Promise<MemoryEngine> {
  if (!isLabel(opts?.name)) throw new MemoryError('invalid_request', MEMORY_NAME_RULE)
  const visibility = opts.visibility ?? 'private'
  const problem = visibilityProblem(visibility, opts.orgId)
  if (problem !== null) throw new MemoryError('invalid_request', problem)
  if (opts.id !== undefined && !isMemoryId(opts.id)) {
    throw new MemoryError('invalid_request', 'a memory id is 1 to 64 lowercase letters, digits and dashes', { id: String(opts.id).slice(0, 80) })
  }
  const info: MemoryInfo = {
    id: opts.id ?? `${Date.now().toString(36)}-${randomId(8)}`,
    name: opts.name.trim(),
    visibility,
    orgId: opts.orgId ?? null,
    createdAt: new Date().toISOString(),
    retrieval: retrievalConfig(opts.retrieval, opts.embedder),
  }
  const registry = new RegistryDB(opts)
  try {
    await registry.memories.add(info)
  } catch (err) {
    if ((err as { name?: string }).name === 'ConstraintError') throw new MemoryError('conflict', `a memory with id "${info.id}" is already on this device; open it instead`, { id: info.id })
    throw storageError(err)
  } finally {
    registry.close()
  }
  const db = new MemoryDB(info.id, opts)
  // A memory made here organization-visible tells its sync document so at its first sync; a
  // copy of a memory that lives elsewhere (`id`) takes its visibility from the document instead.
  const owed = visibility === 'organization' && opts.id === undefined
  await saveNewMemory(db, info, owed)
  const embedder = queryOnce(opts.embedder)
  const index = await createEntityIndex(indexOptions(info, embedder))
  const notes = await createNoteIndex(noteIndexOptions(info, embedder))
  return new MemoryEngine(info, db, new Graph(), index, notes, { proposals: [], files: [], version: 0 })
}

/**
 * Opens a memory's engine; `wrap` makes the handle around it (given the stored connections)
 * before the open's last step is timed and background filing starts.
 */
export async function openEngine<T>(id: string, opts: OpenMemoryOptions, wrap: (engine: MemoryEngine, connections: ConnectionRecord[]) => T): Promise<T> {
  const clock = stepClock()
  const registry = new RegistryDB(opts)
  const info = await registry.memories.get(id)
  registry.close()
  if (!info) throw new MemoryError('not_found', `no memory with id "${id}"`, { id })
  checkRetrieval(info, opts.embedder)
  const embedder = queryOnce(opts.embedder)
  clock.step('registry')
  const db = new MemoryDB(id, opts)
  await db.open()
  clock.step('database')
  // Observations are the truth. The state saved with the index at the stored version, under
  // this build's rules, is the observations and their derivation: read as it is, it spares
  // reading every observation row and deriving. Otherwise (rules changed, or commits after the
  // save) the rows are read and the graph derived, and rows of other rules are rewritten.
  let read = await readForOpen(db)
  // an import that did not commit is put back, unless another tab is writing it right now:
  // then its notes are left out of what this open reads
  let importing: Set<string> | undefined
  if (read.importPending) {
    if (await importUnderway(id)) importing = new Set(read.importPending.slugs)
    else {
      await stored(() => rollBackImport(db, read.importPending!))
      read = await readForOpen(db)
    }
  }
  let state = read.rulesMatch ? unpackOpenState(read.graphRow, read.version, DERIVATION_RULES) : undefined
  let observations: Iterable<Observation> | NoteShelf | undefined = state?.observations
  if (!observations) {
    // the rows, with what must agree with them read again in their transaction
    const rows = await readObservations(db)
    read = { ...read, ...rows }
    state = read.rulesMatch ? unpackOpenState(read.graphRow, read.version, DERIVATION_RULES) : undefined
    observations = importing ? rows.observations.filter((o) => !importing.has(o.slug)) : rows.observations
  }
  const { version, proposals, files, connections } = read
  const aliasMap = new Map(read.aliases.map((a) => [a.variant, a.canonical]))
  clock.step('read')
  const graph = state ? Graph.fromRows(observations, aliasMap, state.entities, state.relationships, state.noteEntities, state.dormant) : Graph.derive(observations, aliasMap)
  if (!read.rulesMatch && !importing) await repairDerived(db, graph)
  clock.step(state ? 'graph' : 'derive')
  // the notes' texts are left in storage when the state saved them apart: read after the open
  const source = state?.slugs && state.saveId !== undefined ? noteSource(db, state.saveId, state.slugs) : undefined
  // Index snapshots saved in the same write as the open state hold exactly its graph and
  // notes: nothing to bring up to date. Any other (older, or saved by another tab) is checked
  // document by document, and only changed texts are indexed again.
  const savedWith = (row: SavedIndex | undefined) => state?.saveId !== undefined && state.observations !== undefined && row?.saveId === state.saveId && row.version === version
  const snap = read.entityIndex
  // an unreadable snapshot costs a rebuild, never the memory
  const restored = snap ? await Promise.resolve().then(() => restoreEntityIndex(unpackIndex(snap) as never, { ...indexOptions(info, embedder), documents: (key) => entityDocOf(graph, key) })).catch(() => undefined) : undefined
  clock.step('entity index')
  let index: EntityIndex
  const indexCurrent = restored !== undefined && savedWith(snap)
  if (restored && indexCurrent) {
    index = restored
  } else if (restored) {
    const gone = restored.keys().filter((key) => !graph.entities.has(key))
    if (gone.length) await restored.remove(gone)
    await restored.upsert([...graph.entities.values()].map(entityDoc))
    index = restored
  } else {
    index = await createEntityIndex(indexOptions(info, embedder))
    await index.upsert([...graph.entities.values()].map(entityDoc))
  }
  clock.step('entity catch-up')
  const readNotes = async () => void (source && graph.notesInStorage > 0 && (await readNotesInto(graph, source)))
  const notes = await openNoteIndex(read.noteIndex, graph, noteIndexOptions(info, embedder), savedWith(read.noteIndex), clock, readNotes)
  // both indexes and the state as saved together: closing right away has nothing to save again
  const engine = new MemoryEngine(info, db, graph, index, notes.index, { proposals, files, version, hasValidity: read.hasValidity, ...(read.singleValued ? { singleValued: read.singleValued } : {}), ...(indexCurrent && notes.current ? { savedVersion: version } : {}), ...(state?.slugs && state.saveId !== undefined ? { savedNames: nameBlocksOf(db, state.saveId, state.entities) } : {}) })
  if (source) engine.readNotesFrom(source)
  const memory = wrap(engine, connections)
  clock.step('engine')
  engine.openSteps = clock.steps
  engine.fileInBackground()
  return memory
}

/** Both indexes embed a recall's query: one embedder that remembers recent queries serves both. */
function queryOnce(embedder: Embedder | undefined): Embedder | undefined {
  return embedder && rememberRecentTexts(embedder)
}

/** What the entity index holds of an entity, for a restore that must rebuild its BM25 part. */
function entityDocOf(graph: Graph, key: string): EntityDoc | undefined {
  const e = graph.entities.get(key)
  return e && entityDoc(e)
}

function noteTextOf(graph: Graph, slug: string): string | undefined {
  const o = graph.getObservation(slug)
  return o && noteDoc(o).text
}

function indexOptions(info: MemoryInfo, embedder: Embedder | undefined): Parameters<typeof createEntityIndex>[0] {
  return embedder && info.retrieval.embedder !== BM25_ONLY ? { embedder, weights: info.retrieval.weights } : {}
}

function noteIndexOptions(info: MemoryInfo, embedder: Embedder | undefined): Parameters<typeof createNoteIndex>[0] {
  return embedder && info.retrieval.embedder !== BM25_ONLY ? { embedder } : {}
}

/**
 * The saved note index brought up to the observations, or a new one when there is none or it
 * is unreadable; `current` when it was restored as saved with the open state.
 */
async function openNoteIndex(saved: SavedIndex | undefined, graph: Graph, opts: Parameters<typeof createNoteIndex>[0], current: boolean, clock: StepClock, readNotes: () => Promise<void>): Promise<{ index: NoteIndex; current: boolean }> {
  const restore = () => (saved ? Promise.resolve().then(() => restoreNoteIndex(unpackIndex(saved) as never, { ...opts, texts: (slug) => noteTextOf(graph, slug) })) : Promise.resolve(undefined))
  // one of an older analysis is rebuilt from the texts: read them, then restore again
  const restored = await restore().catch((err) => (err instanceof NoteInStorage ? readNotes().then(restore) : undefined)).catch(() => undefined)
  clock.step('note index')
  if (restored && current) return { index: restored, current: true }
  // any other snapshot is brought up to the notes, which needs their texts
  await readNotes()
  const notes = restored ?? (await createNoteIndex(opts))
  const gone = notes.keys().filter((slug) => graph.getObservation(slug) === undefined)
  if (gone.length) await notes.remove(gone)
  // only notes whose text changed since the snapshot are embedded again
  await notes.upsert([...graph.allObservations()].map(noteDoc))
  clock.step('note catch-up')
  return { index: notes, current: false }
}

interface StepClock {
  /** Milliseconds per step, in order. */
  readonly steps: Record<string, number>
  step(name: string): void
}

/** Times the steps of an open, for the benchmarks (and anyone asking why an open was slow). */
function stepClock(): StepClock {
  let last = performance.now()
  const steps: Record<string, number> = {}
  return {
    steps,
    step(name) {
      const now = performance.now()
      steps[name] = (steps[name] ?? 0) + (now - last)
      last = now
    },
  }
}

function checkRetrieval(info: MemoryInfo, embedder: Embedder | undefined): void {
  const r = info.retrieval
  if (r.embedder === BM25_ONLY) return
  if (!embedder) throw new MemoryError('config_locked', `memory "${info.name}" was created with embedder ${r.embedder}; open it with that embedder`, { retrieval: r })
  if (embedder.id !== r.embedder || embedder.checksum !== r.modelChecksum || embedder.dimensions !== r.dimensions) {
    throw new MemoryError(
      'config_locked',
      `memory "${info.name}" was created with embedder ${r.embedder} (${r.dimensions} dimensions); this is ${embedder.id} (${embedder.dimensions}). Its retrieval config cannot change: use migrate to copy it into a new memory with the new embedder.`,
      { retrieval: r, offered: { embedder: embedder.id, modelChecksum: embedder.checksum, dimensions: embedder.dimensions } },
    )
  }
}

/** Rewrites the stored entity and relationship rows derived by other rules than this build's. */
async function repairDerived(db: MemoryDB, graph: Graph): Promise<void> {
  // in pieces, as an import: one transaction of every row left Chromium an undo log to scan at each open
  await writeDerivedInPieces(db, [...graph.entities.values()], [...graph.relationships.values()], [...graph.edgeBacking()])
  await saveMeta(db, DERIVATION_KEY, DERIVATION_RULES)
}

