// Derived entity and relationship rows in IndexedDB: the rows themselves, and apart from them
// which notes back each one, so a change to a busy entity stores only the pairs that changed.
import type { GraphDelta } from '../core/graph'
import type { Entity, Relationship } from '../core/types'
import type { BackingRow, MemoryDB, StoredEntity, StoredRelationship } from './db'

/** The tables a transaction that writes derived rows must include. */
export function derivedTables(db: MemoryDB) {
  return [db.entities, db.relationships, db.entityNotes, db.relationshipNotes]
}

export function entityRow(e: Entity): StoredEntity {
  const { observations: _, ...row } = e
  return { ...row, queries: [...row.queries] }
}

export function relationshipRow(r: Relationship): StoredRelationship {
  const { observations: _, ...row } = r
  return row
}

/** Stores one change of the graph, inside the caller's transaction. */
export async function persistDelta(db: MemoryDB, delta: GraphDelta): Promise<void> {
  if (delta.removedEntities.length) await db.entities.bulkDelete(delta.removedEntities)
  if (delta.upsertedEntities.length) await db.entities.bulkPut(delta.upsertedEntities.map(entityRow))
  if (delta.removedRelationships.length) await db.relationships.bulkDelete(delta.removedRelationships)
  if (delta.upsertedRelationships.length) await db.relationships.bulkPut(delta.upsertedRelationships.map(relationshipRow))
  const put = { entity: [] as BackingRow[], relationship: [] as BackingRow[] }
  const gone = { entity: [] as Array<[string, string]>, relationship: [] as Array<[string, string]> }
  for (const c of delta.backing) {
    if (c.backs) put[c.of].push({ key: c.key, slug: c.slug })
    else gone[c.of].push([c.key, c.slug])
  }
  if (gone.entity.length) await db.entityNotes.bulkDelete(gone.entity)
  if (put.entity.length) await db.entityNotes.bulkPut(put.entity)
  if (gone.relationship.length) await db.relationshipNotes.bulkDelete(gone.relationship)
  if (put.relationship.length) await db.relationshipNotes.bulkPut(put.relationship)
}
