// One-entry writes and reads of a memory's Y.Doc, for tests and benchmarks that play a peer:
// each is one `applyMemoryWrites` transaction, or one checked read, of the production module.
import type * as Y from 'yjs'
import type { Alias, AppendixFile, Observation } from '../../src/core/types'
import { memoryMaps, type RejectedPair } from '../../src/sync/layout'
import { applyMemoryWrites, readEntry } from '../../src/sync/memory-doc'
import { checkObservation } from '../../src/sync/validate'

export function putObservation(doc: Y.Doc, observation: Observation, origin: unknown = null): void {
  applyMemoryWrites(doc, { observations: { put: [observation] } }, origin)
}

export function deleteObservation(doc: Y.Doc, slug: string, origin: unknown = null): void {
  applyMemoryWrites(doc, { observations: { delete: [slug] } }, origin)
}

export function putAlias(doc: Y.Doc, alias: Alias, origin: unknown = null): void {
  applyMemoryWrites(doc, { aliases: { put: [alias] } }, origin)
}

export function deleteAlias(doc: Y.Doc, variant: string, origin: unknown = null): void {
  applyMemoryWrites(doc, { aliases: { delete: [variant] } }, origin)
}

export function putRejected(doc: Y.Doc, id: string, value: RejectedPair, origin: unknown = null): void {
  applyMemoryWrites(doc, { rejected: { put: [{ id, value }] } }, origin)
}

export function putFile(doc: Y.Doc, file: AppendixFile, bytes: Uint8Array, origin: unknown = null): void {
  applyMemoryWrites(doc, { files: { put: [{ file, bytes }] } }, origin)
}

export function deleteFile(doc: Y.Doc, path: string, origin: unknown = null): void {
  applyMemoryWrites(doc, { files: { delete: [path] } }, origin)
}

/** One observation as the document holds it, checked; null when absent or invalid. */
export function readObservation(doc: Y.Doc, slug: string): Observation | null {
  const value = memoryMaps(doc).observations.get(slug)
  if (value === undefined) return null
  const r = readEntry(slug, value, checkObservation)
  return r.ok ? r.value : null
}
