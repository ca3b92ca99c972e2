// Reports, once per transaction, exactly which keys of a memory document changed, from the
// Yjs map events (never by diffing the document), so the engine can re-derive incrementally.
import type * as Y from 'yjs'
import type { Alias, AppendixFile, Observation } from '../core/types'
import { memoryMaps, type RejectedPair, type RootName, type SingleValuedSetting } from './layout'
import { readEntry, type InvalidEntry } from './memory-doc'
import { checkAlias, checkFile, checkFileBytes, checkObservation, checkRejected, checkSetting, type Checked } from './validate'

export interface KeyedChange<T> {
  upserted: T[]
  deleted: string[]
}

export interface MemoryDocChange {
  /** The transaction origin: the provider for merges, whatever the writer passed for local writes. */
  origin: unknown
  /** True when the transaction was made on this device, false when it came from a peer. */
  local: boolean
  observations: KeyedChange<Observation>
  aliases: KeyedChange<Alias>
  rejected: KeyedChange<{ id: string; value: RejectedPair }>
  /** The memory's settings (only `singleValued` so far). */
  settings: KeyedChange<{ key: string; value: SingleValuedSetting }>
  files: KeyedChange<AppendixFile>
  /** Paths whose bytes arrived or changed (read them with readFileBytes) or went away. */
  fileBytes: KeyedChange<string>
  /** Values that failed their check: left out of `upserted`, the engine keeps its previous state for them. */
  invalid: InvalidEntry[]
}

function emptyChange(origin: unknown, local: boolean): MemoryDocChange {
  const keyed = () => ({ upserted: [], deleted: [] })
  return { origin, local, observations: keyed(), aliases: keyed(), rejected: keyed(), settings: keyed(), files: keyed(), fileBytes: keyed(), invalid: [] }
}

function isEmpty(c: MemoryDocChange): boolean {
  return [c.observations, c.aliases, c.rejected, c.settings, c.files, c.fileBytes].every((k) => k.upserted.length === 0 && k.deleted.length === 0) && c.invalid.length === 0
}

/**
 * Calls `onChange` after every transaction that touched the memory's maps. Returns a function
 * that stops observing. `onChange` errors are not caught here: they surface where Yjs runs
 * observers, so the caller should not throw.
 */
export function observeMemoryDoc(doc: Y.Doc, onChange: (change: MemoryDocChange) => void): () => void {
  const maps = memoryMaps(doc)
  const pending = new WeakMap<Y.Transaction, MemoryDocChange>()

  const changeOf = (tr: Y.Transaction): MemoryDocChange => {
    let c = pending.get(tr)
    if (!c) {
      c = emptyChange(tr.origin, tr.local)
      pending.set(tr, c)
    }
    return c
  }

  function watch<T, V>(name: RootName, map: Y.Map<unknown>, check: (k: string, v: unknown) => Checked<T>, into: (c: MemoryDocChange) => KeyedChange<V>, shape: (key: string, value: T) => V) {
    const handler = (event: Y.YMapEvent<unknown>, tr: Y.Transaction) => {
      const c = changeOf(tr)
      const target = into(c)
      for (const [key, info] of event.changes.keys) {
        if (info.action === 'delete') {
          target.deleted.push(key)
          continue
        }
        const r = readEntry(key, map.get(key), check)
        if (r.ok) target.upserted.push(shape(key, r.value))
        else c.invalid.push({ map: name, key: key.slice(0, 200), reason: r.reason })
      }
    }
    map.observe(handler)
    return () => map.unobserve(handler)
  }

  const stops = [
    watch('observations', maps.observations, checkObservation, (c) => c.observations, (_k, v) => v),
    watch('aliases', maps.aliases, checkAlias, (c) => c.aliases, (_k, v) => v),
    watch('rejected', maps.rejected, checkRejected, (c) => c.rejected, (id, value) => ({ id, value })),
    watch('settings', maps.settings, checkSetting, (c) => c.settings, (key, value) => ({ key, value })),
    watch('files', maps.files, checkFile, (c) => c.files, (_k, v) => v),
    watch('fileBytes', maps.fileBytes, checkFileBytes, (c) => c.fileBytes, (path) => path),
  ]

  // Map observers run before `afterTransaction`, so by now every map has reported.
  const flush = (tr: Y.Transaction) => {
    const c = pending.get(tr)
    if (!c) return
    pending.delete(tr)
    if (!isEmpty(c)) onChange(c)
  }
  doc.on('afterTransaction', flush)
  return () => {
    for (const stop of stops) stop()
    doc.off('afterTransaction', flush)
  }
}
