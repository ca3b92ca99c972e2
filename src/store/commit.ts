// The one way a change to the graph reaches the database. The engine previews the change on the
// graph, saves it here in one transaction, and applies it to the live graph only once this has
// resolved: a read never sees a change that is not committed, and a failed save leaves nothing.
import type { GraphDelta } from '../core/graph'
import type { Alias, MergeProposal, Observation } from '../core/types'
import { hasValidity } from '../core/validity'
import type { MemoryDB, JournalRow } from './db'
import { derivedTables, persistDelta } from './derived-rows'
import { storageError } from './storage-error'

export const VERSION_KEY = 'version'
/**
 * Set once a note carrying world time (core/validity) is stored, never cleared: an open of a
 * memory without it needs no timeline, so it does not wait for every note's text.
 */
export const VALIDITY_KEY = 'hasValidity'

export interface GraphCommit {
  /** The memory's commit version after this one. */
  version: number
  /** The derived entities, edges and backing that change. */
  delta: GraphDelta
  observations?: { put: readonly Observation[]; delete: readonly string[] }
  /** The whole alias map after the change, when it changed. */
  aliases?: readonly Alias[]
  proposals?: readonly MergeProposal[]
  /** Journal rows of a local commit, until its sync document update is saved. */
  journal?: readonly JournalRow[]
  /** Journal keys a remote change settles: what the document holds now stands for them. */
  settled?: readonly string[]
}

export async function saveCommit(db: MemoryDB, c: GraphCommit): Promise<void> {
  try {
    await db.transaction('rw', [db.observations, ...derivedTables(db), db.aliases, db.proposals, db.meta, db.unmirrored], async () => {
      await db.meta.put({ key: VERSION_KEY, value: c.version })
      if (c.settled?.length) await db.unmirrored.bulkDelete([...c.settled])
      if (c.observations?.put.length) await db.observations.bulkPut([...c.observations.put])
      if (c.observations?.put.some(hasValidity)) await db.meta.put({ key: VALIDITY_KEY, value: true })
      if (c.observations?.delete.length) await db.observations.bulkDelete([...c.observations.delete])
      if (c.aliases) {
        await db.aliases.clear()
        await db.aliases.bulkPut([...c.aliases])
      }
      if (c.proposals?.length) await db.proposals.bulkPut([...c.proposals])
      await persistDelta(db, c.delta)
      if (c.journal?.length) await db.unmirrored.bulkPut([...c.journal])
    })
  } catch (err) {
    throw storageError(err)
  }
}
