// Keeps one open memory and its sync document in step: local commits are mirrored into the
// document, and changes that merge in from other devices are applied to the engine, which
// re-derives only what they touch. The document is the thing that syncs; Dexie stays the
// local source the engine opens from.
import type * as Y from 'yjs'
import type { Alias, AppendixFile, Observation } from '../core/types'
import { applyMemoryWrites, readEntry, readFileBytes, readMemoryDocInTurns, type InvalidEntry, type MemoryWrites } from './memory-doc'
import { checkAlias, checkFile } from './validate'
import { collapseAliases } from '../core/consolidate'
import { sameJson } from '../core/same-json'
import { memoryMaps, SINGLE_VALUED_KEY } from './layout'
import { observeMemoryDoc, type MemoryDocChange } from './observe'
import { ALIASES_JOURNAL_KEY, observationJournalKey, type CommittedChange, type RemoteChange, type SyncPort } from './port'
import type { JournalRow } from '../store/db'
import { observationBytes, piecesOf } from '../store/import-pieces'
import { ROW_BYTES } from './doc-store'
import { nextTurn, turns } from './turns'

/** The transaction origin of the engine's own writes, so their echo is not applied twice. */
export const ENGINE_ORIGIN = Symbol('cairn-engine')

export interface DocBinding {
  /** Settles when every remote change seen so far has been applied to the engine. */
  settled(): Promise<void>
  /** Settles when the remote changes seen so far (not those seen later) have been applied or failed. */
  applied(): Promise<void>
  /** Remote changes that could not be applied (storage failures), newest last. */
  readonly failures: readonly Error[]
  /** Values other devices wrote that failed their checks and were left out, newest last (the latest 100). */
  readonly invalid: readonly InvalidEntry[]
  stop(): void
}

export interface BindOptions {
  /**
   * Settles when every document update so far is on disk (the document's local store). Local
   * commits stay in the engine's journal until then; without it they stay there for good, so
   * the next bind lets them win again, which is what an unsaved document needs.
   */
  saved?: () => Promise<void>
  /** Called when values from another device were left out as invalid. */
  onInvalid?: (entries: readonly InvalidEntry[]) => void
}

const INVALID_KEPT = 100

/**
 * Binds `engine` to `doc`. First reconciles them: what the document holds wins (it is what
 * every device agrees on), except where the engine's journal shows a local commit the
 * document may have missed (a crash between the two saves): there the local state wins.
 * Observations only the engine holds (written before the memory was first bound) are added
 * to the document.
 */
export async function bindMemoryDoc(engine: SyncPort, doc: Y.Doc, options: BindOptions = {}): Promise<DocBinding> {
  const failures: Error[] = []
  const invalid: InvalidEntry[] = []
  const whenSaved = (rows: readonly JournalRow[] | undefined) => {
    if (!rows?.length || !options.saved) return
    options
      .saved()
      .then(() => engine.markMirrored(rows))
      // the rows stay, so the next bind re-applies the local state: harmless
      .catch(() => undefined)
  }
  let chain: Promise<unknown> = Promise.resolve()
  const schedule = (task: () => Promise<unknown>) => {
    chain = chain.then(task).catch((err: Error) => {
      failures.push(err)
    })
  }

  // Many notes at once (a first sync of a large memory) are applied a piece at a time: one
  // transaction of them all left Chromium's store slower to open ever after (see
  // store/import-pieces). Each piece is a commit of its own; the rest of the change goes first.
  // `current` leaves out, when a piece is applied, notes that have changed since it was made.
  const applyInPieces = (put: readonly Observation[], rest: Omit<RemoteChange, 'put'>, current: (o: Observation) => boolean = () => true) => {
    const pieces = piecesOf(put, observationBytes)
    schedule(() => engine.applyRemote({ ...rest, put: (pieces[0] ?? []).filter(current) }))
    for (const piece of pieces.slice(1)) schedule(() => engine.applyRemote({ put: piece.filter(current), deleted: [] }))
  }

  const stopObserving = observeMemoryDoc(doc, (change: MemoryDocChange) => {
    if (change.origin === ENGINE_ORIGIN) return
    if (change.invalid.length) {
      invalid.push(...change.invalid)
      invalid.splice(0, Math.max(0, invalid.length - INVALID_KEPT))
      options.onInvalid?.(change.invalid)
    }
    const aliasesChanged = change.aliases.upserted.length > 0 || change.aliases.deleted.length > 0
    // read the alias map now: a later transaction may change it again before this runs
    const aliases = aliasesChanged ? aliasMapOf(doc) : undefined
    // an entry whose bytes come in a later transaction is applied when they arrive
    const entries = new Map(change.files.upserted.map((file) => [file.path, file]))
    for (const path of change.fileBytes.upserted) {
      const file = entries.has(path) ? undefined : fileEntryOf(doc, path)
      if (file) entries.set(path, file)
    }
    const files = [...entries.values()]
      .map((file) => ({ file, bytes: readFileBytes(doc, file.path) }))
      .filter((f): f is { file: AppendixFile; bytes: Uint8Array } => f.bytes !== null)
    const rejected = change.rejected.upserted.map(({ id, value }) => ({ id, pair: value.pair, at: value.at }))
    const singleValued = change.settings.upserted.find((s) => s.key === SINGLE_VALUED_KEY)?.value
    applyInPieces(change.observations.upserted, {
      ...(singleValued ? { singleValued } : {}),
      deleted: change.observations.deleted,
      ...(aliases ? { aliases } : {}),
      ...(files.length ? { files } : {}),
      ...(rejected.length ? { rejected } : {}),
    })
  })

  /**
   * Notes committed here while the binding reconciles (it runs in turns): the mirror below puts
   * them in the document, and no older copy from either side, taken later, may undo them.
   */
  const committedSince = new Set<string>()
  const unchangedSince = (slug: string): boolean => !committedSince.has(slug)
  let reconciling = true
  const stopMirroring = engine.onCommitted((c: CommittedChange) => {
    if (reconciling) {
      for (const o of c.observations?.put ?? []) committedSince.add(o.slug)
      for (const slug of c.observations?.delete ?? []) committedSince.add(slug)
    }
    applyMemoryWrites(doc, toDocWrites(doc, c), ENGINE_ORIGIN)
    whenSaved(c.journal)
  })

  // Reconcile, in turns (at 100,000 notes, at once, it held the worker for seconds). A note
  // committed here meanwhile is in the document already, newer, by the mirror above: it is
  // left out of what either side takes from the other.
  const pace = turns()
  const journal = await engine.journalRows()
  const journaled = new Set(journal.map((r) => r.key))
  const local = engine.snapshotState()
  // by slug: a scan per document entry would make opening a large memory quadratic
  const localBySlug = new Map<string, Observation>()
  for (const o of local.observations) {
    localBySlug.set(o.slug, o)
    await pace()
  }
  // entries equal to the memory's own notes are not checked again (most of them, most opens)
  const inDoc = await readMemoryDocInTurns(doc, pace, localBySlug)
  const put: Observation[] = []
  for (const o of inDoc.observations.values()) {
    await pace()
    if (journaled.has(observationJournalKey(o.slug)) || !unchangedSince(o.slug)) continue
    const mine = localBySlug.get(o.slug)
    if (!mine || !sameJson(mine, o)) put.push(o)
  }
  const onlyLocal: Observation[] = []
  for (const o of localBySlug.values()) {
    await pace()
    const theirs = inDoc.observations.get(o.slug)
    if (!theirs || (journaled.has(observationJournalKey(o.slug)) && !sameJson(o, theirs))) onlyLocal.push(o)
  }
  // deleted here by a commit the document missed
  const deletedLocally = [...inDoc.observations.keys()].filter((slug) => journaled.has(observationJournalKey(slug)) && !localBySlug.has(slug))
  const localAliasesWin = journaled.has(ALIASES_JOURNAL_KEY)
  const docAliases = collapseAliases(new Map([...inDoc.aliases.values()].map((a) => [a.variant, a.canonical])))
  const aliasesDiffer = !localAliasesWin && docAliases.size > 0 && !sameMap(docAliases, local.aliases)
  const docFiles = [...inDoc.files.values()].map((file) => ({ file, bytes: readFileBytes(doc, file.path) })).filter((f): f is { file: AppendixFile; bytes: Uint8Array } => f.bytes !== null)
  const docRejected = [...inDoc.rejected].map(([id, value]) => ({ id, pair: value.pair, at: value.at }))
  const extras = await engine.extrasState()
  // the document's declaration wins; one only this device holds (made before the first sync) goes in
  const docSingleValued = inDoc.settings.get(SINGLE_VALUED_KEY)
  const takeSingleValued = docSingleValued && !sameJson(docSingleValued, extras.singleValued) ? { singleValued: docSingleValued } : {}
  if (put.length || aliasesDiffer || docFiles.length || docRejected.length || takeSingleValued.singleValued) {
    applyInPieces(put, { deleted: [], ...(aliasesDiffer ? { aliases: docAliases } : {}), files: docFiles, rejected: docRejected, ...takeSingleValued }, (o) => unchangedSince(o.slug))
  }
  const pushSingleValued = !docSingleValued && extras.singleValued !== undefined
  const filesOnlyLocal = extras.files.filter(({ file }) => !inDoc.files.has(file.path))
  const rejectedOnlyLocal = extras.rejected.filter((r) => !inDoc.rejected.has(r.id))
  const pushAliases = (localAliasesWin && !sameMap(docAliases, local.aliases)) || (docAliases.size === 0 && local.aliases.size > 0)
  if (onlyLocal.length || deletedLocally.length || pushAliases || filesOnlyLocal.length || rejectedOnlyLocal.length || pushSingleValued) {
    const now = new Date().toISOString()
    // A memory bound for the first time puts every note in the document: in pieces of about a
    // log row, a task each, so the worker answers between them (one transaction for a large
    // memory would hold it for seconds) and the log holds rows a later load applies a task each.
    // A note committed meanwhile is in the document already, newer. (`observationBytes` counts a
    // note as stored with its indexes, about four times its bytes in the document: pieces of
    // about half a row.)
    const pieces = piecesOf(onlyLocal, observationBytes, 2 * ROW_BYTES)
    const writes: MemoryWrites = {
      observations: { put: (pieces[0] ?? []).filter((o) => unchangedSince(o.slug)), delete: deletedLocally.filter(unchangedSince) },
      files: { put: filesOnlyLocal },
      rejected: { put: rejectedOnlyLocal.map((r) => ({ id: r.id, value: { pair: r.pair, at: r.at } })) },
      ...(pushSingleValued ? { settings: { put: [{ key: SINGLE_VALUED_KEY, value: extras.singleValued! }] } } : {}),
    }
    if (pushAliases) writes.aliases = aliasWrites(doc, [...local.aliases].map(([variant, canonical]) => ({ variant, canonical, createdAt: now })))
    applyMemoryWrites(doc, writes, ENGINE_ORIGIN)
    for (const piece of pieces.slice(1)) {
      await nextTurn()
      const put = piece.filter((o) => unchangedSince(o.slug))
      if (put.length) applyMemoryWrites(doc, { observations: { put } }, ENGINE_ORIGIN)
    }
  }
  whenSaved(journal)
  await chain
  reconciling = false
  committedSince.clear()

  return {
    settled: async () => {
      // a task may schedule no follow-up, but new remote changes may arrive meanwhile
      let seen: Promise<unknown>
      do {
        seen = chain
        await seen
      } while (seen !== chain)
    },
    applied: async () => {
      await chain
    },
    failures,
    invalid,
    stop() {
      stopObserving()
      stopMirroring()
    },
  }
}

/** The checked file entry at `path`, if the document holds a valid one. */
function fileEntryOf(doc: Y.Doc, path: string): AppendixFile | undefined {
  const value = memoryMaps(doc).files.get(path)
  if (value === undefined) return undefined
  const r = readEntry(path, value, checkFile)
  return r.ok ? r.value : undefined
}

/** The checked alias map, read without touching the (much larger) observations. */
function aliasMapOf(doc: Y.Doc): Map<string, string> {
  const out = new Map<string, string>()
  memoryMaps(doc).aliases.forEach((value, key) => {
    const r = readEntry(key, value, checkAlias)
    if (r.ok) out.set(r.value.variant, r.value.canonical)
  })
  return out
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

/** A local commit as document writes; the alias map becomes puts and deletes against the document's. */
function toDocWrites(doc: Y.Doc, c: CommittedChange): MemoryWrites {
  const writes: MemoryWrites = {}
  if (c.observations) writes.observations = c.observations
  if (c.files) writes.files = { put: c.files }
  if (c.rejected) writes.rejected = { put: c.rejected.map((r) => ({ id: r.id, value: { pair: r.pair, at: r.at } })) }
  if (c.aliases) writes.aliases = aliasWrites(doc, c.aliases)
  if (c.singleValued) writes.settings = { put: [{ key: SINGLE_VALUED_KEY, value: c.singleValued }] }
  return writes
}

/** The document writes that make its alias map equal `aliases`. */
function aliasWrites(doc: Y.Doc, aliases: Alias[]): NonNullable<MemoryWrites['aliases']> {
  const current = memoryMaps(doc).aliases
  const next = new Map<string, Alias>(aliases.map((a) => [a.variant, a]))
  const put = [...next.values()].filter((a) => (current.get(a.variant) as Alias | undefined)?.canonical !== a.canonical)
  const del = [...current.keys()].filter((k) => !next.has(k))
  return { put, delete: del }
}
