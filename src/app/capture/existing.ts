// Until a write may name an existing entity without its description, the app repeats the
// entity's current description (from inspect) so the note still saves. Remove this file and its
// one call when the write contract takes a bare name for an existing entity.
import type { EntityInput } from '../../core/types'
import type { AppConnection } from '../engine'

export async function withExistingDescriptions(conn: AppConnection, entities: EntityInput[]): Promise<EntityInput[]> {
  return Promise.all(
    entities.map(async (e) => {
      if (e.description?.trim()) return e
      try {
        const { entity } = await conn.inspect(e.name)
        return { ...e, description: entity.description, ...(e.type ? {} : { type: entity.type }) }
      } catch {
        // not in the memory: the write names it as an entity without a description
        return e
      }
    }),
  )
}
