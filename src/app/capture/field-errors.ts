// A rejected write's problems, each placed at the field it is about and said in plain words.
import { isMemoryError } from '../../core/errors'
import { errorMessage } from '../worker-link'

export interface FieldProblem {
  /** Where it shows: `title`, `content`, `entity:<origin>.<field>`, `relationship:<origin>`, or `form`. */
  field: string
  message: string
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

const LABELS: Record<string, string> = { category: 'Category', tags: 'Tags', observedAt: 'Observed at', confidence: 'Confidence', source: 'Source', files: 'Files' }

/**
 * `entityOrigins[i]` and `relationshipOrigins[i]` say which row on screen made the i-th entity or
 * relationship of the write, so "entities[2].description" lands on that row's description.
 */
export function fieldProblems(error: unknown, entityOrigins: string[], relationshipOrigins: string[]): FieldProblem[] {
  const issues = isMemoryError(error) ? (error.details as { issues?: Array<{ path?: unknown; message?: unknown }> }).issues : undefined
  if (!Array.isArray(issues) || issues.length === 0) return [{ field: 'form', message: errorMessage(error) }]
  return issues.map((issue) => {
    const path = typeof issue.path === 'string' ? issue.path : ''
    const message = typeof issue.message === 'string' ? issue.message : String(issue.message)
    const entity = /^entities\[(\d+)\](?:\.(\w+))?/.exec(path)
    if (entity) {
      const origin = entityOrigins[Number(entity[1])]
      const part = entity[2] === 'description' || entity[2] === 'type' ? entity[2] : 'name'
      if (origin) return { field: `entity:${origin}.${part}`, message: capital(message) }
    }
    const rel = /^relationships\[(\d+)\]/.exec(path)
    if (rel) {
      const origin = relationshipOrigins[Number(rel[1])]
      if (origin) return { field: `relationship:${origin}`, message: capital(message) }
    }
    if (path === 'title') return { field: path, message: `The title ${message}` }
    if (path === 'content') return { field: path, message: `The note ${message}` }
    const top = path.split(/[.[]/)[0] ?? ''
    if (top in LABELS) return { field: top, message: `${LABELS[top]} ${message}` }
    // an entity's or relationship's problem names it in its message; the index path is noise
    if (entity || rel) return { field: 'form', message: capital(message) }
    return { field: 'form', message: capital(path ? `${path} ${message}` : message) }
  })
}
