// After a refusal a device's document holds changes the server will never take, and every
// later change from it builds on them. This recovery, not wired into the library (a memory
// reloads from the server instead), starts a new document from the server's state and
// re-applies only what the connection's tier allows, naming what was dropped: the tier tests
// use it to check what the server lets each tier keep.
import * as Y from 'yjs'
import type { Tier } from '../../src/core/types'
import { applyMemoryWrites, createMemoryDoc, readFileBytes, readMemoryDoc, type MemoryWrites } from '../../src/sync/memory-doc'
import { sameJson } from '../../src/core/same-json'

export interface Rebuilt {
  /** A new document: the server's state plus the re-applied local additions. Sync this one. */
  doc: Y.Doc
  /** The local additions written into `doc` (as new changes, from a new client id). */
  kept: MemoryWrites
  /** Keys whose local value differs from the server's and was given up, per map. */
  dropped: { observations: string[]; aliases: string[]; files: string[] }
}

/**
 * `server` holds the server's state (e.g. a fresh document synced with a second client).
 * Local deletions are not re-applied: a key missing locally may simply not have arrived yet.
 */
export function rebuildFromServer(server: Y.Doc, local: Y.Doc, tier: Tier, origin: unknown = 'recover'): Rebuilt {
  const doc = createMemoryDoc()
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(server), origin)
  const theirs = readMemoryDoc(doc)
  const mine = readMemoryDoc(local)
  const same = sameJson
  const kept: MemoryWrites = { observations: { put: [] }, aliases: { put: [] }, rejected: { put: [] }, files: { put: [] } }
  const dropped: Rebuilt['dropped'] = { observations: [], aliases: [], files: [] }
  if (tier === 'read') {
    dropped.observations = [...mine.observations.keys()].filter((k) => !same(mine.observations.get(k), theirs.observations.get(k)))
    return { doc, kept: {}, dropped }
  }

  for (const [slug, o] of mine.observations) {
    const server = theirs.observations.get(slug)
    if (!server || (tier === 'full' && !same(server, o))) kept.observations!.put!.push(o)
    else if (!same(server, o)) dropped.observations.push(slug)
  }
  // Aliases and rejections may be re-pointed by read_write, so the local value wins.
  for (const [variant, a] of mine.aliases) if (!same(theirs.aliases.get(variant), a)) kept.aliases!.put!.push(a)
  for (const [id, value] of mine.rejected) if (!same(theirs.rejected.get(id), value)) kept.rejected!.put!.push({ id, value })
  // the settings are the owner's: only a full connection's stand
  if (tier === 'full') for (const [key, value] of mine.settings) if (!same(theirs.settings.get(key), value)) (kept.settings ??= { put: [] }).put!.push({ key, value })
  for (const [path, f] of mine.files) {
    const bytes = readFileBytes(local, path)
    const server = theirs.files.get(path)
    if (bytes && (!server || (tier === 'full' && !same(server, f)))) kept.files!.put!.push({ file: f, bytes })
    else if (server && !same(server, f)) dropped.files.push(path)
  }
  applyMemoryWrites(doc, kept, origin)
  return { doc, kept, dropped }
}
