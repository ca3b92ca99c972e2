// Benchmark probe run by test/bench/browser-engine.ts (on its own page, not shipped with the
// app): the public Memory.open and recall in a module worker on
// real IndexedDB, with the shipped static model on onnxruntime-web, timed from inside the
// worker so the figures exclude the page <-> worker hop. One worker fills a memory; a fresh
// worker (nothing cached in memory) then times the cold open and recall.
import * as Comlink from 'comlink'
import { validateObservationInput } from '../../../src/core/contract'
import type { Observation, ObservationInput } from '../../../src/core/types'
import { Graph } from '../../../src/core/graph'
import { GRAPH_SNAPSHOT_KEY, INDEX_SNAPSHOT_KEY, NOTE_INDEX_SNAPSHOT_KEY, NOTE_TEXTS_KEY, VERSION_KEY } from '../../../src/engine/memory-engine'
import { unpackIndex, unpackNoteTexts, unpackOpenState, type SavedIndex } from '../../../src/store/open-state'
import { DERIVATION_RULES } from '../../../src/core/graph'
import { Memory } from '../../../src/engine/memory-handle'
import { MemoryDB } from '../../../src/store/db'
import { restoreEntityIndex, type IndexSnapshot } from '../../../src/search/entity-index'
import { restoreNoteIndex, type NoteIndexSnapshot } from '../../../src/search/note-index'
import type { Embedder } from '../../../src/search/embedder'
import { createStaticEmbedder } from '../../../src/search/static-embedder'
import { engineOf, ownerOf } from '../../../src/internals'
import { assembleSemantic, parseRecallRequest } from '../../../src/core/recall'
import { QueryEvidence, type QueryTerm } from '../../../src/core/evidence'
import type { EntityIndex } from '../../../src/search/entity-index'
import type { NoteIndex } from '../../../src/search/note-index'

export interface FilledMemory {
  id: string
  token: string
  entities: number
  relationships: number
  loadMs: number
  saveIndexMs: number
}

export interface RecallTimings {
  /** Fetching (or reading from Cache Storage) and initialising the static model. */
  modelLoadMs: number
  /** `Memory.open`: read IndexedDB, take the saved graph, restore the index snapshot. */
  openMs: number
  /** The steps of that open, timed inside it (see MemoryEngine.openSteps). */
  openSteps: Record<string, number>
  /** The first recall after opening, which warms lazy structures. */
  firstRecallMs: number
  /** Of it, reading the notes it shows that the open left in storage (ms). */
  firstNoteReadMs: number
  /** Reads of such notes by all the recalls before the recall parts, and their time in all (ms). */
  noteReads: number
  noteReadMs: number
  /** Each further recall, in order. */
  recallMs: number[]
  /** Entities returned by the timed recalls, summed: a query that finds nothing is not a benchmark. */
  hits: number
  /** The retrieval config's embedder, proving which ranking was timed. */
  embedder: string
  /** The steps of an open, repeated one by one after the timed open, to show where its time goes. */
  phases: OpenPhases
  /** Each write after the recalls (none unless asked for), in order. */
  writeMs: number[]
  /** The recalls again, after `recallParts`: the open's filing has had seconds to finish. */
  recallAgainMs: number[]
  /** From the start of the open until its background filing was done (-1: not within 2 minutes), with the recalls above in between. */
  filedMs: number
  /** Only in a run given writes: from an open left alone until the notes' texts it left in storage were in, then until its filing was done, and a write issued right after an open. */
  textsInMs?: number
  idleFiledMs?: number
  firstWriteMs?: number
  /** The parts of a recall, each timed alone over the same queries (ms per query, in order): the note index, the entity index, assembling the answer. */
  recallParts: Record<string, number[]>
  /** The bytes of stored vectors one hybrid recall scans (entity and note indexes), and the fastest read of them all once. */
  floor: { vectorBytes: number; scanMs: number }
}

export interface OpenPhases {
  /** Aliases and meta (with the saved observations and graph), in one transaction, and unpacking the saved state. */
  readMs: number
  /** The graph from the saved one, as open builds it when it is current and of this build's rules. */
  fromRowsMs: number
  /** The graph derived from the observations, as open builds it when the rules changed (and always did before). */
  deriveMs: number
  restoreIndexMs: number
  /** The note index restored from its snapshot (open does this after the entity index). */
  restoreNotesMs: number
  /** Whether the saved snapshot matched the stored version (otherwise open rebuilds the index). */
  snapshotCurrent: boolean
  /** The read of each table or saved value alone, one transaction each, in ms. */
  readParts: Record<string, number>
  /** What the rows open reads hold, in bytes, by row and field (fields under 1% of the row summed as "rest"). */
  readBytes: Record<string, number>
}

/** Bytes of a value as IndexedDB stores it, roughly: typed arrays by length, strings by characters. */
function bytesOf(value: unknown): number {
  if (typeof value === 'string') return value.length
  if (ArrayBuffer.isView(value)) return value.byteLength
  if (typeof value !== 'object' || value === null) return 8
  let sum = 0
  for (const v of Object.values(value)) sum += bytesOf(v)
  return sum
}

/** `row`'s bytes by field, two levels into it (`noteIndex.snapshot.text` counts the postings' fields together). */
function fieldBytes(name: string, row: unknown): Record<string, number> {
  const out: Record<string, number> = {}
  const total = bytesOf(row)
  const add = (path: string, value: unknown, depth: number) => {
    const b = bytesOf(value)
    if (depth < 2 && typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && b >= total / 100) {
      for (const [k, v] of Object.entries(value)) add(`${path}.${k}`, v, depth + 1)
    } else if (b >= total / 100) out[path] = b
    else out[`${name}.rest`] = (out[`${name}.rest`] ?? 0) + b
  }
  add(name, row, 0)
  return out
}

/** Times each read of an open alone, so the read's total can be split by what it reads. */
async function readParts(db: MemoryDB): Promise<Record<string, number>> {
  const parts: Record<string, () => Promise<unknown>> = {
    observationRows: () => db.observations.toArray(),
    aliases: () => db.aliases.toArray(),
    connections: () => db.connections.toArray(),
    entityIndex: () => db.meta.get(INDEX_SNAPSHOT_KEY),
    noteIndex: () => db.meta.get(NOTE_INDEX_SNAPSHOT_KEY),
    graph: () => db.meta.get(GRAPH_SNAPSHOT_KEY),
    // read after the open, not in it, part by part
    texts: () => db.meta.where(':id').startsWith(NOTE_TEXTS_KEY).toArray(),
  }
  const out: Record<string, number> = {}
  for (const [name, read] of Object.entries(parts)) {
    const t = performance.now()
    await db.transaction('r', [db.observations, db.aliases, db.connections, db.meta], read)
    out[name] = Math.round(performance.now() - t)
  }
  return out
}

/** Re-runs the reads, the graph build and the index restore of `Memory.open`, each timed alone, and a derive for comparison. */
async function openPhases(id: string, model: Embedder | undefined): Promise<OpenPhases & { vectors: ArrayBufferView[] }> {
  const db = new MemoryDB(id, {})
  try {
    const r0 = performance.now()
    // as open reads: the saved state when it is current, else the observation rows
    const [aliases, saved, versionRow, graphRow, savedNotes] = await db.transaction('r', [db.aliases, db.meta], () =>
      Promise.all([db.aliases.toArray(), db.meta.get(INDEX_SNAPSHOT_KEY), db.meta.get(VERSION_KEY), db.meta.get(GRAPH_SNAPSHOT_KEY), db.meta.get(NOTE_INDEX_SNAPSHOT_KEY)]),
    )
    const rows = unpackOpenState(graphRow?.value, versionRow?.value as number, DERIVATION_RULES)
    if (!rows) throw new Error('the saved open state is not current: open would read the rows and derive')
    const observations = rows.observations ?? (await db.observations.toArray())
    const readMs = performance.now() - r0
    const aliasMap = new Map(aliases.map((a) => [a.variant, a.canonical]))
    const g0 = performance.now()
    Graph.fromRows(observations, aliasMap, rows.entities, rows.relationships)
    const fromRowsMs = performance.now() - g0
    // the derive it spares needs every text: those the open leaves in storage are read first, untimed
    for (let part = 0, parts = 1; rows.slugs && rows.saveId && part < parts; part++) {
      const texts = unpackNoteTexts((await db.meta.get(`${NOTE_TEXTS_KEY}${part}`))?.value, rows.saveId, rows.slugs, part)
      if (!texts) throw new Error(`part ${part} of the saved texts is missing`)
      parts = texts.parts
      rows.observations!.takeInPart(texts.from, texts.slugs, texts.text, texts.ends)
    }
    const d0 = performance.now()
    Graph.derive(observations, aliasMap)
    const deriveMs = performance.now() - d0
    const savedIndex = saved?.value as SavedIndex | undefined
    const x0 = performance.now()
    const snap = savedIndex ? (unpackIndex(savedIndex) as IndexSnapshot) : undefined
    if (snap) await restoreEntityIndex(snap, model ? { embedder: model } : {})
    const restoreIndexMs = performance.now() - x0
    const n0 = performance.now()
    const notes = savedNotes?.value ? (unpackIndex(savedNotes.value as SavedIndex) as NoteIndexSnapshot) : undefined
    if (notes) await restoreNoteIndex(notes, model ? { embedder: model } : {})
    const restoreNotesMs = performance.now() - n0
    const vectors = [snap?.vectors, notes?.vectors].filter((v): v is NonNullable<typeof v> => ArrayBuffer.isView(v))
    const readBytes = { ...fieldBytes('graph', graphRow?.value), ...fieldBytes('entityIndex', saved?.value), ...fieldBytes('noteIndex', savedNotes?.value) }
    return { readMs, fromRowsMs, deriveMs, restoreIndexMs, restoreNotesMs, snapshotCurrent: savedIndex?.version === versionRow?.value, readParts: await readParts(db), readBytes, vectors }
  } finally {
    db.close()
  }
}

/** Turns generated inputs into stored observations the way a write would, with stable slugs. */
function toObservations(inputs: ObservationInput[]): Observation[] {
  const now = new Date().toISOString()
  return inputs.map((input, i) => {
    const { warnings: _, ...fields } = validateObservationInput(input)
    return { slug: `bench-${i}`, ...fields, observedAt: fields.observedAt ?? now, createdBy: 'bench', createdAt: now, updatedAt: now }
  })
}

/** Reads every byte of `views` once with a tight loop, fastest of several runs: the floor under a flat scan of them. */
function scanFloor(views: ArrayBufferView[]): { vectorBytes: number; scanMs: number } {
  const arrays = views.map((v) => new Int8Array(v.buffer, v.byteOffset, v.byteLength))
  const sum = (a: Int8Array): number => {
    let x = 0, y = 0, z = 0, w = 0
    const n = a.length - (a.length % 4)
    for (let i = 0; i < n; i += 4) {
      x += a[i]!
      y += a[i + 1]!
      z += a[i + 2]!
      w += a[i + 3]!
    }
    return x + y + z + w
  }
  let sink = 0
  for (let r = 0; r < 200; r++) for (const a of arrays) sink += sum(a.subarray(0, 4_096))
  let best = Infinity
  for (let r = 0; r < 15; r++) {
    const t = performance.now()
    for (const a of arrays) sink += sum(a)
    best = Math.min(best, performance.now() - t)
  }
  if (Number.isNaN(sink)) throw new Error('the floor scan produced NaN')
  return { vectorBytes: arrays.reduce((n, a) => n + a.length, 0), scanMs: best }
}

/**
 * The three parts of `MemoryEngine.recall`, each timed alone per query, through the engine's
 * own indexes (private fields, read here only to time them): where a recall's time goes.
 */
async function timeRecallParts(memory: Memory, queries: string[]): Promise<Record<string, number[]>> {
  const opened = engineOf(memory) as unknown as { c: { notes: NoteIndex; index: EntityIndex }; committedGraph: Graph; info: { retrieval: { snippetLength: number } } }
  const engine = { notes: opened.c.notes, index: opened.c.index, committedGraph: opened.committedGraph, info: opened.info }
  const parts: Record<string, number[]> = { notes: [], entities: [], assemble: [] }
  for (const query of queries) {
    const f = parseRecallRequest({ query })
    let t = performance.now()
    const noteTerms: QueryTerm[] = []
    const entityTerms: QueryTerm[] = []
    const notes = await engine.notes.search(query, Math.max(f.limits.observations, 300), noteTerms)
    parts.notes!.push(performance.now() - t)
    t = performance.now()
    const hits = await engine.index.search(query, Math.max(f.limits.entities * 4, 20), undefined, entityTerms)
    parts.entities!.push(performance.now() - t)
    t = performance.now()
    const evidence = new QueryEvidence({ terms: noteTerms, size: engine.notes.size() }, { terms: entityTerms, size: engine.index.size() })
    assembleSemantic(engine.committedGraph, hits, notes, evidence, f, engine.info.retrieval.snippetLength)
    parts.assemble!.push(performance.now() - t)
  }
  return parts
}

/** From `since` until the engine's background filing was done (performance.now() times); -1 when not within 2 minutes. */
async function msUntilFiled(engine: { filedAt: number | undefined }, since: number): Promise<number> {
  for (let waited = 0; engine.filedAt === undefined && waited < 120_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
  return engine.filedAt === undefined ? -1 : engine.filedAt - since
}

/**
 * Two more opens of the memory: one left alone, timed until the open's background filing is
 * done; one written to at once, which files the rest first. What a write right after opening costs.
 */
async function timeAfterOpen(id: string, token: string, model: Embedder | undefined, input: ObservationInput): Promise<{ textsInMs: number; idleFiledMs: number; firstWriteMs: number }> {
  const options = model ? { embedder: model } : {}
  const idle = await Memory.open(id, options)
  const opened = performance.now()
  const engine = engineOf(idle)
  await ownerOf(idle).notesHeld()
  const textsInMs = performance.now() - opened
  const idleFiledMs = await msUntilFiled(engine, opened)
  await idle.close()
  const memory = await Memory.open(id, options)
  try {
    const conn = await memory.connectWithToken(token)
    const s = performance.now()
    await conn.write(input)
    return { textsInMs, idleFiledMs, firstWriteMs: performance.now() - s }
  } finally {
    await memory.close()
  }
}

function embedder(hybrid: boolean): Promise<Embedder | undefined> {
  return hybrid ? createStaticEmbedder() : Promise.resolve(undefined)
}

const api = {
  /** Creates a memory holding `inputs`, saves its index snapshot and closes it. */
  async fill(name: string, inputs: ObservationInput[], hybrid: boolean): Promise<FilledMemory> {
    const model = await embedder(hybrid)
    const memory = await Memory.create({ name, ...(model ? { embedder: model } : {}) })
    const conn = await memory.connect({ agent: 'bench', tier: 'full' })
    const t0 = performance.now()
    await engineOf(memory).importObservations(toObservations(inputs), [])
    const loadMs = performance.now() - t0
    const graph = engineOf(memory).committedGraph
    const s0 = performance.now()
    await memory.saveIndex()
    const saveIndexMs = performance.now() - s0
    const filled = { id: memory.info.id, token: conn.token!, entities: graph.entities.size, relationships: graph.relationships.size, loadMs, saveIndexMs }
    await memory.close()
    return filled
  },

  /** Opens a filled memory in this (fresh) worker and times the open and the recalls. */
  async recall(id: string, token: string, hybrid: boolean, queries: string[], writes: ObservationInput[] = []): Promise<RecallTimings> {
    const m0 = performance.now()
    const model = await embedder(hybrid)
    const modelLoadMs = performance.now() - m0
    const o0 = performance.now()
    const memory = await Memory.open(id, model ? { embedder: model } : {})
    const openMs = performance.now() - o0
    const openSteps = { ...engineOf(memory).openSteps }
    // how long recalls wait for notes the open left in storage (a private field, wrapped here only to time it)
    const noteReadMs: number[] = []
    const opened = (engineOf(memory) as unknown as { c: { loader: { source?: { some(slugs: string[]): Promise<unknown> } } } }).c.loader
    const source = opened.source
    if (source) {
      const some = source.some.bind(source)
      opened.source = { ...source, some: async (slugs: string[]) => {
        const t = performance.now()
        try {
          return await some(slugs)
        } finally {
          noteReadMs.push(performance.now() - t)
        }
      } }
    }
    try {
      const conn = await memory.connectWithToken(token)
      const [first, ...rest] = queries
      const f0 = performance.now()
      await conn.recall({ query: first ?? '' })
      const firstRecallMs = performance.now() - f0
      const firstNoteReadMs = noteReadMs.reduce((a, b) => a + b, 0)
      const recallMs: number[] = []
      let hits = 0
      for (const query of rest) {
        const s = performance.now()
        const result = await conn.recall({ query })
        recallMs.push(performance.now() - s)
        hits += result.entities.length
      }
      // the parts read the graph directly: with every text in (a recall reads the notes it needs itself)
      await ownerOf(memory).notesHeld()
      const recallParts = await timeRecallParts(memory, rest)
      // the same recalls again, once what the open left for later is filed (see fileInBackground)
      const recallAgainMs: number[] = []
      for (const query of rest) {
        const s = performance.now()
        await conn.recall({ query })
        recallAgainMs.push(performance.now() - s)
      }
      // until the open's background filing is done: a change before then files the rest first
      const engine = engineOf(memory)
      const filedMs = await msUntilFiled(engine, o0)
      const writeMs: number[] = []
      for (const input of writes) {
        const s = performance.now()
        await conn.write(input)
        writeMs.push(performance.now() - s)
      }
      const embedderId = memory.info.retrieval.embedder
      await memory.close()
      const { vectors, ...phases } = await openPhases(id, model)
      // it also names an entity new to the memory, as a note often does: its duplicate check runs
      const firstWrite = writes[0]
      const newcomer = { name: 'Newcomer Entity', type: 'person', description: 'someone the memory has not met yet' }
      const afterOpen = firstWrite ? await timeAfterOpen(id, token, model, { ...firstWrite, title: 'First write after an open', entities: [...(firstWrite.entities ?? []), newcomer] }) : undefined
      return { modelLoadMs, openMs, openSteps, firstRecallMs, firstNoteReadMs, noteReads: noteReadMs.length, noteReadMs: noteReadMs.reduce((a, b) => a + b, 0), recallMs, hits, embedder: embedderId, phases, writeMs, recallParts, recallAgainMs, filedMs, ...afterOpen, floor: scanFloor(vectors) }
    } catch (err) {
      await memory.close()
      throw err
    }
  },

  /**
   * Opens the memory as the app does, then keeps it in its sync document (what the app starts
   * after an open), recalling every 50 ms until the document is bound. The first call on a memory
   * writes every note into a new document; later ones read the stored document and reconcile.
   */
  async syncDocument(id: string, token: string, hybrid: boolean, queries: string[]): Promise<DocumentTimings> {
    const model = await embedder(hybrid)
    const o0 = performance.now()
    const memory = await Memory.open(id, model ? { embedder: model } : {})
    try {
      const conn = await memory.connectWithToken(token)
      await conn.recall({ query: queries[0] ?? '' })
      const coldOpenMs = performance.now() - o0
      const s0 = performance.now()
      let bound = false
      const started = memory.sync().then(() => void (bound = true))
      // a tick every 10 ms: how late one comes is how long a recall arriving then would wait for the worker
      let tickDue = performance.now() + 10
      let longestBusyMs = 0
      const ticks = setInterval(() => {
        const now = performance.now()
        longestBusyMs = Math.max(longestBusyMs, now - tickDue)
        tickDue = now + 10
      }, 10)
      const recallMs: number[] = []
      for (let q = 1; !bound; q++) {
        const s = performance.now()
        await conn.recall({ query: queries[q % queries.length] ?? '' })
        recallMs.push(performance.now() - s)
        await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 50))])
      }
      clearInterval(ticks)
      const startMs = performance.now() - s0
      const updates = await engineOf(memory).db.docUpdates.toArray()
      return { coldOpenMs, startMs, recallMs, longestBusyMs, documentBytes: updates.reduce((sum, u) => sum + u.update.byteLength, 0) }
    } finally {
      await memory.close()
    }
  },
}

export interface DocumentTimings {
  /** Open and first recall, before the document is asked for. */
  coldOpenMs: number
  /** From asking for the sync document until it was bound. */
  startMs: number
  /** The recalls made meanwhile, each timed from its call. */
  recallMs: number[]
  /** The longest the worker was busy meanwhile (a 10 ms tick's lateness): what a recall made at the worst moment waits. */
  longestBusyMs: number
  /** The document as stored, once bound. */
  documentBytes: number
}

export type BenchApi = typeof api

Comlink.expose(api)
