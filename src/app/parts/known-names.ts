// Names of entities already in a memory, for relationship autocomplete: every one of them.
import type { AppConnection } from '../worker-link'

export async function knownEntityNames(conn: AppConnection): Promise<string[]> {
  return (await conn.vocabulary()).entities.map((e) => e.name)
}
