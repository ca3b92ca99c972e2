// Writes to and reads from one memory's Y.Doc. Every write is one transaction with an
// origin, so observers can tell the engine's own writes from merges; every value is checked
// and copied on the way in and on the way out, so the document never aliases caller objects.
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import { sameJson } from '../core/same-json'
import type { Alias, AppendixFile, Observation } from '../core/types'
import { memoryMaps, type MemoryMaps, type RejectedPair, type RootName, type SingleValuedSetting } from './layout'
import { checkAlias, checkFile, checkFileBytes, checkKey, checkObservation, checkRejected, checkSetting, type Checked } from './validate'
import { MAX_FILE_BYTES } from '../core/limits'

export function createMemoryDoc(): Y.Doc {
  // gc stays on: the document keeps current values, not an edit history.
  return new Y.Doc({ gc: true })
}

export interface FileWrite {
  file: AppendixFile
  bytes: Uint8Array
}

/** A batch of writes applied in one transaction (one merge for every peer). */
export interface MemoryWrites {
  observations?: { put?: Observation[]; delete?: string[] }
  aliases?: { put?: Alias[]; delete?: string[] }
  rejected?: { put?: Array<{ id: string; value: RejectedPair }>; delete?: string[] }
  settings?: { put?: Array<{ key: string; value: SingleValuedSetting }> }
  files?: { put?: FileWrite[]; delete?: string[] }
}

function accept<T>(map: RootName, key: string, result: Checked<T>): T {
  const badKey = checkKey(key)
  if (badKey) throw new MemoryError('invalid_write', `${map} key rejected: ${badKey}`, { map, key: key.slice(0, 80) })
  if (!result.ok) throw new MemoryError('invalid_write', `${map} "${key.slice(0, 80)}" cannot be synced: ${result.reason}`, { map, key: key.slice(0, 80), reason: result.reason })
  return result.value
}

function checkFileWrite({ file, bytes }: FileWrite): FileWrite {
  const meta = accept('files', file.path, checkFile(file.path, file))
  if (bytes.byteLength > MAX_FILE_BYTES) {
    throw new MemoryError('too_large', `file "${file.path}" is ${bytes.byteLength} bytes; files that sync are limited to ${MAX_FILE_BYTES} bytes (5 MiB). Keep larger sources outside the memory.`, { path: file.path, size: bytes.byteLength, limit: MAX_FILE_BYTES })
  }
  if (bytes.byteLength !== meta.size) {
    throw new MemoryError('invalid_write', `file "${file.path}" says size ${meta.size} but has ${bytes.byteLength} bytes`, { path: file.path })
  }
  return { file: meta, bytes: bytes.slice() }
}

/** Validates the whole batch first, then writes it in one transaction: all or nothing. */
export function applyMemoryWrites(doc: Y.Doc, writes: MemoryWrites, origin: unknown = null): void {
  const obsPut = (writes.observations?.put ?? []).map((o) => accept('observations', o.slug, checkObservation(o.slug, o)))
  const aliasPut = (writes.aliases?.put ?? []).map((a) => accept('aliases', a.variant, checkAlias(a.variant, a)))
  const rejectedPut = (writes.rejected?.put ?? []).map(({ id, value }) => ({ id, value: accept('rejected', id, checkRejected(id, value)) }))
  const settingPut = (writes.settings?.put ?? []).map(({ key, value }) => ({ key, value: accept('settings', key, checkSetting(key, value)) }))
  const filePut = (writes.files?.put ?? []).map(checkFileWrite)
  const maps = memoryMaps(doc)
  doc.transact(() => {
    for (const o of obsPut) maps.observations.set(o.slug, o)
    for (const slug of writes.observations?.delete ?? []) maps.observations.delete(slug)
    for (const a of aliasPut) maps.aliases.set(a.variant, a)
    for (const v of writes.aliases?.delete ?? []) maps.aliases.delete(v)
    for (const { id, value } of rejectedPut) maps.rejected.set(id, value)
    for (const id of writes.rejected?.delete ?? []) maps.rejected.delete(id)
    for (const { key, value } of settingPut) maps.settings.set(key, value)
    for (const { file, bytes } of filePut) {
      maps.files.set(file.path, file)
      maps.fileBytes.set(file.path, bytes)
    }
    for (const p of writes.files?.delete ?? []) {
      maps.files.delete(p)
      maps.fileBytes.delete(p)
    }
  }, origin)
}

/** A stored value that failed its check: reported, never thrown, never passed on. */
export interface InvalidEntry {
  map: RootName
  key: string
  reason: string
}

export interface MemorySnapshot {
  observations: Map<string, Observation>
  aliases: Map<string, Alias>
  rejected: Map<string, RejectedPair>
  settings: Map<string, SingleValuedSetting>
  files: Map<string, AppendixFile>
  invalid: InvalidEntry[]
}

type Checker<T> = (key: string, value: unknown) => Checked<T>

export function readEntry<T>(key: string, value: unknown, check: Checker<T>): Checked<T> {
  const badKey = checkKey(key)
  if (badKey) return { ok: false, reason: badKey }
  return check(key, value)
}

/** Reads `map` into `out`, one entry a step (see `readMemoryDocInTurns`). */
function* readMap<T>(name: RootName, map: Y.Map<unknown>, check: Checker<T>, invalid: InvalidEntry[], out: Map<string, T>, known?: ReadonlyMap<string, T>): Generator<void, void, void> {
  for (const [key, value] of map.entries()) {
    const mine = known?.get(key)
    // a value equal to one already checked is that value: only what differs is checked again
    if (mine !== undefined && sameJson(value, mine)) out.set(key, mine)
    else {
      const r = readEntry(key, value, check)
      if (r.ok) out.set(key, r.value)
      else invalid.push({ map: name, key: key.slice(0, 200), reason: r.reason })
    }
    yield
  }
}

/** The reading of the whole document, one entry a step. */
function* readSteps(doc: Y.Doc, snapshot: MemorySnapshot, known?: ReadonlyMap<string, Observation>): Generator<void, void, void> {
  const maps: MemoryMaps = memoryMaps(doc)
  yield* readMap('observations', maps.observations, checkObservation, snapshot.invalid, snapshot.observations, known)
  yield* readMap('aliases', maps.aliases, checkAlias, snapshot.invalid, snapshot.aliases)
  yield* readMap('rejected', maps.rejected, checkRejected, snapshot.invalid, snapshot.rejected)
  yield* readMap('settings', maps.settings, checkSetting, snapshot.invalid, snapshot.settings)
  yield* readMap('files', maps.files, checkFile, snapshot.invalid, snapshot.files)
}

function emptySnapshot(): MemorySnapshot {
  return { observations: new Map(), aliases: new Map(), rejected: new Map(), settings: new Map(), files: new Map(), invalid: [] }
}

/**
 * The whole document, checked; used once when a memory opens, later changes come from
 * observeMemoryDoc. `known` holds observations already checked (the memory's own, by slug): an
 * entry equal to its known observation is read as that object, unchecked again.
 */
export function readMemoryDoc(doc: Y.Doc, known?: ReadonlyMap<string, Observation>): MemorySnapshot {
  const snapshot = emptySnapshot()
  for (const _ of readSteps(doc, snapshot, known));
  return snapshot
}

/**
 * `readMemoryDoc` in turns: `pace` is asked after each entry (see `turns`). A write to the
 * document between turns may or may not be seen; the caller knows which keys it wrote.
 */
export async function readMemoryDocInTurns(doc: Y.Doc, pace: () => Promise<void> | undefined, known?: ReadonlyMap<string, Observation>): Promise<MemorySnapshot> {
  const snapshot = emptySnapshot()
  for (const _ of readSteps(doc, snapshot, known)) await pace()
  return snapshot
}

export function readFileBytes(doc: Y.Doc, path: string): Uint8Array | null {
  const value = memoryMaps(doc).fileBytes.get(path)
  if (value === undefined) return null
  const r = checkFileBytes(path, value)
  return r.ok ? r.value.slice() : null
}
