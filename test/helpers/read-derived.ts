// The stored derived rows put back together with their backing notes, for tests that check the
// rows agree with the live graph (the engine itself never reads them back whole).
import type { Entity, Relationship } from '../../src/core/types'
import type { BackingRow, MemoryDB } from '../../src/store/db'
import { derivedTables } from '../../src/store/derived-rows'

/**
 * The stored rows put back together with their backing notes (sorted, as the graph lists them).
 * Backing of a dormant edge (stated, but an end is missing) has no row and is left out.
 */
export async function readDerived(db: MemoryDB): Promise<{ entities: Entity[]; relationships: Relationship[] }> {
  return db.transaction('r', derivedTables(db), async () => {
    const [entities, relationships, entityNotes, relationshipNotes] = await Promise.all([
      db.entities.toArray(),
      db.relationships.toArray(),
      db.entityNotes.toArray(),
      db.relationshipNotes.toArray(),
    ])
    const backing = (rows: BackingRow[]) => {
      // primary-key order is by key then slug, so each list comes out sorted
      const by = new Map<string, string[]>()
      for (const { key, slug } of rows) {
        const list = by.get(key)
        if (list) list.push(slug)
        else by.set(key, [slug])
      }
      return by
    }
    const eb = backing(entityNotes)
    const rb = backing(relationshipNotes)
    return {
      entities: entities.map((e) => ({ ...e, observations: eb.get(e.key) ?? [] })),
      relationships: relationships.map((r) => ({ ...r, observations: rb.get(r.key) ?? [] })),
    }
  })
}
