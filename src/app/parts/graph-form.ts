// Form state for the entities and relationships of an observation, and its conversion to engine input.
import type { NoteListRequest } from '../../core/notes'
import type { EntityInput, RelationshipInput } from '../../core/types'

export interface EntityRow {
  name: string
  type: string
  description: string
  /** One retrieval query per line. */
  queries: string
}

export interface RelationshipRow {
  source: string
  type: string
  target: string
  description: string
}

export const emptyEntity = (): EntityRow => ({ name: '', type: '', description: '', queries: '' })
export const emptyRelationship = (): RelationshipRow => ({ source: '', type: '', target: '', description: '' })

/** Blank rows are ignored so an unused row never blocks a save. */
export function toEntities(rows: EntityRow[]): EntityInput[] {
  return rows
    .filter((r) => r.name.trim() || r.description.trim())
    .map((r) => {
      const queries = r.queries.split('\n').map((q) => q.trim()).filter(Boolean)
      return { name: r.name.trim(), description: r.description, ...(r.type.trim() ? { type: r.type.trim() } : {}), ...(queries.length ? { queries } : {}) }
    })
}

export function toRelationships(rows: RelationshipRow[]): RelationshipInput[] {
  return rows
    .filter((r) => r.source.trim() || r.target.trim() || r.type.trim())
    .map((r) => ({ source: r.source.trim(), type: r.type.trim(), target: r.target.trim(), ...(r.description.trim() ? { description: r.description.trim() } : {}) }))
}

export function splitTags(text: string): string[] {
  return text.split(',').map((t) => t.trim()).filter(Boolean)
}

/** The filters a screen offers over notes (Notes, Recall), as typed. */
export interface NoteFilterFields {
  category: string
  tags: string
  from: string
  to: string
  entity: string
}

/** Those filters as a request's fields; blank ones are left out. */
export function noteFilters(f: NoteFilterFields): Pick<NoteListRequest, 'category' | 'tags' | 'from' | 'to' | 'entity'> {
  const out: Pick<NoteListRequest, 'category' | 'tags' | 'from' | 'to' | 'entity'> = {}
  if (f.category.trim()) out.category = f.category.trim()
  const tags = splitTags(f.tags)
  if (tags.length) out.tags = tags
  if (f.from) out.from = f.from
  if (f.to) out.to = f.to
  if (f.entity.trim()) out.entity = f.entity.trim()
  return out
}
