// Names of entities already in a memory, for relationship autocomplete.
import type { AppConnection } from '../engine'

export async function knownEntityNames(conn: AppConnection): Promise<string[]> {
  const all = await conn.recall({ limits: { entities: 100, relationships: 1, observations: 1 } })
  return all.entities.map((e) => e.name)
}
