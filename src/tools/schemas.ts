// Zod schemas for every tool argument. They carry the shapes and descriptions a model reads;
// what a write or update may hold is judged by the core contract alone, which the write and
// update schemas run as a refinement, so the two can never disagree. String limits are
// advertised (maxLength) but enforced by the contract, on the stored, normalized value.
import { z } from 'zod'
import { validateFileFields, validateObservationInput, validatePatch } from '../core/contract'
import { CURSOR_CHARS, LABEL_CHARS, LIMITS, MAX_FILE_BYTES, RECALL_TEXT_CHARS } from '../core/limits'
import { MemoryError } from '../core/errors'
import { isSlug, SLUG_MAX_CHARS } from '../core/identifiers'
import { isMemoryError } from '../core/errors'
import { MAX_LIMITS, DEFAULT_LIMITS } from '../core/recall'

const isoDate = z
  .string()
  .describe('ISO 8601 date or date-time, e.g. 2026-03-14 or 2026-03-14T09:30:00Z.')

const slug = z
  .string()
  .min(1)
  .max(SLUG_MAX_CHARS)
  .refine(isSlug, { message: 'is not a slug: Unicode letters and digits joined by "-", as write and recall return them' })
  .describe('Stable identity of an observation, as returned by write or recall. It never changes, even when the title does.')

const tier = (t: 'read' | 'read_write' | 'full'): string => `Needs a ${t} connection.`

/** Text whose limits the contract enforces after normalization; the schema advertises them. */
const text = (max: number, required = false) => z.string().meta(required ? { minLength: 1, maxLength: max } : { maxLength: max })

/** Marks the issues the contract found, so a caller can let the contract report them itself. */
export const CONTRACT = 'contract'

/** Whether every issue of a failed parse came from the contract (the shape was right). */
export function onlyContractIssues(error: z.ZodError): boolean {
  return error.issues.every((i) => i.code === 'custom' && (i.params as Record<string, unknown> | undefined)?.[CONTRACT] === true)
}

/** Runs a contract check as a refinement: its issues become zod issues at their paths. */
function byContract(check: (value: unknown) => unknown) {
  return (value: unknown, ctx: z.RefinementCtx): void => {
    try {
      check(value)
    } catch (err) {
      if (!isMemoryError(err)) throw err
      const issues = (err.details.issues as Array<{ path: string; message: string }> | undefined) ?? [{ path: '', message: err.message }]
      for (const i of issues) ctx.addIssue({ code: 'custom', message: i.message, params: { [CONTRACT]: true }, path: i.path ? i.path.split(/[.[\]]+/).filter(Boolean).map((k) => (/^\d+$/.test(k) ? Number(k) : k)) : [] })
    }
  }
}

export const entitySchema = z
  .strictObject({
    name: text(LIMITS.nameChars, true).describe('The name of the person, project, organization, place or thing. Reuse the exact name an earlier write or recall returned, so the entity merges instead of duplicating.'),
    type: text(LIMITS.typeChars).optional().describe('Kind of entity, e.g. person, project, organization, place, tool. Default: thing.'),
    description: text(LIMITS.descriptionChars)
      .optional()
      .describe(
        'One or two sentences saying who or what this is. Required for an entity new to this memory: recall matches queries against entity descriptions first. May be left out when naming an entity that already exists; the entity keeps its best description.',
      ),
    queries: z
      .array(text(LIMITS.queryChars, true))
      .max(LIMITS.queries)
      .optional()
      .describe(`Up to ${LIMITS.queries} questions this entity should answer (e.g. "who leads the billing rewrite?"); folded into matching.`),
  })
  .describe('An entity this observation is about.')

export const relationshipSchema = z
  .strictObject({
    source: text(LIMITS.nameChars, true).describe('Name of the source entity: one of this observation\'s entities, or one that already exists.'),
    type: text(LIMITS.typeChars, true).describe('The verb of the edge in snake_case, e.g. works_on, member_of, leads, depends_on.'),
    target: text(LIMITS.nameChars, true).describe('Name of the target entity: one of this observation\'s entities, or one that already exists.'),
    description: text(LIMITS.relationshipDescriptionChars).optional().describe('What the edge means in this case, in a sentence.'),
    weight: z.number().positive().max(LIMITS.maxWeight).optional().describe('Strength of the edge as this observation states it. Default 1.'),
    validFrom: isoDate.optional().describe('When this edge started to hold in the world, if not when the note\'s facts did.'),
    validTo: isoDate.optional().describe('When this edge stopped holding (exclusive), if it did.'),
  })
  .describe('A directed edge between two entities.')

const edgeRef = z.strictObject({
  source: text(LIMITS.nameChars, true).describe('Source entity name of the relationship to remove.'),
  type: text(LIMITS.typeChars, true).describe('Its type, e.g. works_on.'),
  target: text(LIMITS.nameChars, true).describe('Target entity name.'),
})

const fields = {
  title: text(LIMITS.titleChars, true).describe('Short display title. Display only: the slug stays the same when it changes.'),
  content: text(LIMITS.contentHardChars, true)
    .describe(
      `The note itself. Keep it near ${LIMITS.contentSoftChars} characters: one fact or event per observation. For longer material, write several observations and put the source document in the appendix with store_file, referenced by path in files. Hard limit ${LIMITS.contentHardChars}.`,
    ),
  category: text(LIMITS.categoryChars).optional().describe('One coarse bucket, e.g. meeting, decision, preference, fact. Default: note. Recall can filter on it.'),
  tags: z.array(text(LIMITS.tagChars, true)).max(LIMITS.tags).optional().describe('Free-form labels; recall can filter on them.'),
  observedAt: isoDate.optional().describe('When the observed thing happened (ISO 8601). Default: now. Recall can filter on it with from/to.'),
  confidence: z.number().min(0).max(1).optional().describe('How sure you are, 0 to 1. Default 1.'),
  source: text(LIMITS.sourceChars).optional().describe('Where this came from: a URL, a document, a conversation.'),
  entities: z
    .array(entitySchema)
    .max(LIMITS.entities)
    .optional()
    .describe('The entities this observation is about, each with a description. Naming an existing entity merges into it.'),
  relationships: z
    .array(relationshipSchema)
    .max(LIMITS.relationships)
    .optional()
    .describe('Edges among the entities. Strongly encouraged: relationships are what makes a recall return more than the note you already had.'),
  files: z.array(text(LIMITS.pathChars, true)).max(LIMITS.files).optional().describe('Appendix paths (stored with store_file) this observation refers to.'),
  validFrom: isoDate.optional().describe('When the facts of this note started to hold in the world (ISO 8601), if not when they were observed. Default: observedAt.'),
  validTo: isoDate.optional().describe('When they stopped holding (exclusive), after validFrom. Default: still holding.'),
  supersedes: z
    .array(slug)
    .max(LIMITS.supersedes)
    .optional()
    .describe('Slugs of earlier notes whose facts this note replaces from its validFrom (else its observedAt), e.g. a new employer replacing the old one. The older notes are kept, as history; recall leaves them out unless asked for history.'),
}

export const writeArgs = z.strictObject(fields).superRefine(byContract((v) => validateObservationInput(v)))

export const updateArgs = z.strictObject({
  slug,
  title: fields.title.optional(),
  content: fields.content.optional(),
  category: fields.category,
  tags: fields.tags,
  observedAt: fields.observedAt,
  confidence: fields.confidence,
  source: fields.source,
  entities: fields.entities.describe('Unioned with the current entities by name; yours win on conflicts. Omitting an entity does not remove it: use removeEntities.'),
  relationships: fields.relationships.describe('Unioned with the current relationships by (source, type, target); yours win.'),
  files: fields.files,
  validFrom: isoDate.nullable().optional().describe('Sets when the note\'s facts started to hold; null clears it.'),
  validTo: isoDate.nullable().optional().describe('Sets when they stopped holding; null clears it.'),
  supersedes: z.array(slug).max(LIMITS.supersedes).nullable().optional().describe('Replaces the list of notes this one supersedes; null or [] clears it.'),
  removeEntities: z.array(text(LIMITS.nameChars, true)).max(LIMITS.entities).optional().describe('Entity names to drop from this observation, with the relationships that touch them.'),
  removeRelationships: z.array(edgeRef).max(LIMITS.relationships).optional().describe('Relationships to drop, matched by (source, type, target).'),
}).superRefine(byContract((v) => {
  const { slug: _, ...patch } = v as Record<string, unknown>
  validatePatch(patch)
}))

export const slugArgs = z.strictObject({ slug })

export const recallArgs = z.strictObject({
  query: z.string().max(RECALL_TEXT_CHARS).optional().describe('What you want to know, in words. With a query, entities are ranked by their descriptions (and, more weakly, by their notes) and come back with their neighbors, and their notes come back ordered by how well each answers the question; without one, recall lists observations by the filters, newest first, a page at a time.'),
  cursor: z.string().max(CURSOR_CHARS).optional().describe('Without a query: the nextCursor of the previous page, to read the next one.'),
  category: fields.category.describe('Only observations in this category.'),
  tags: fields.tags.describe('Only observations carrying all of these tags.'),
  from: isoDate.optional().describe('Only observations observed at or after this date.'),
  to: isoDate.optional().describe('Only observations observed at or before this date.'),
  entity: z.string().max(RECALL_TEXT_CHARS).optional().describe('Only observations that name this entity.'),
  asOf: isoDate.optional().describe('Answer as of this date: only notes and relationships whose facts held then (their validity interval, else from when they were observed on).'),
  history: z.enum(['current', 'all']).optional().describe('current (default): superseded or expired notes and relationships are left out, and counted in superseded. all: they come back, marked with validTo, supersededBy and current: false.'),
  limits: z
    .strictObject({
      entities: z.number().int().min(0).max(MAX_LIMITS.entities).optional().describe('Most entities to return.'),
      relationships: z.number().int().min(0).max(MAX_LIMITS.relationships).optional().describe('Most relationships to return.'),
      observations: z.number().int().min(0).max(MAX_LIMITS.observations).optional().describe('Most observation snippets to return.'),
      bytes: z.number().int().min(0).max(MAX_LIMITS.bytes).optional().describe('Upper bound on the JSON size of the whole response.'),
    })
    .optional()
    .describe(
      `Caps on the response (defaults: ${DEFAULT_LIMITS.entities} entities, ${DEFAULT_LIMITS.relationships} relationships, ${DEFAULT_LIMITS.observations} observations, ${DEFAULT_LIMITS.bytes} bytes). When a result carries a truncation note, narrow with category, tags, from/to or entity before raising these.`,
    ),
})

export const inspectArgs = z.strictObject({
  name: z.string().min(1).max(LIMITS.nameChars).describe('Entity name (any variant that was merged into it works too).'),
})

export const emptyArgs = z.strictObject({})

export const readFileArgs = z.strictObject({
  path: z.string().min(1).max(LIMITS.pathChars).describe('Appendix path as list_files returns it.'),
})

export const storeFileArgs = z
  .strictObject({
    path: text(LIMITS.pathChars, true).describe('Relative, "/"-separated appendix path, e.g. docs/meeting-2026-03-14.md. Reference it from observations in files.'),
    data: z.string().describe(`The file content, as text or base64 (see encoding). At most ${MAX_FILE_BYTES} bytes once decoded.`),
    encoding: z.enum(['utf8', 'base64']).optional().describe('How data is encoded. Default utf8.'),
    filename: text(LIMITS.filenameChars).optional().describe('Display file name. Default: the last part of path.'),
    type: text(LIMITS.mediaTypeChars).optional().describe('Media type, e.g. text/markdown. Default application/octet-stream.'),
    description: text(LIMITS.descriptionChars).optional().describe('What the file is and why it was kept.'),
  })
  .superRefine(
    byContract((value) => {
      const { issues } = validateFileFields(value as Record<string, unknown>)
      if (issues.length) throw new MemoryError('invalid_write', issues.map((i) => i.message).join('; '), { issues })
    }),
  )

const proposalId = z.string().min(1).max(LABEL_CHARS).describe('Proposal id as consolidate or list_proposals returned it.')

export const acceptProposalArgs = z.strictObject({
  id: proposalId,
  canonical: z.string().max(LIMITS.nameChars).optional().describe('Which of the two entity names survives. Default: the proposal\'s suggestion.'),
})

export const proposalArgs = z.strictObject({ id: proposalId })

export const setSingleValuedArgs = z.strictObject({
  types: z
    .array(text(LIMITS.typeChars, true))
    .max(LIMITS.singleValuedTypes)
    .describe('Every relationship type that holds one target at a time, e.g. ["works_at", "lives_in"]; replaces the earlier list ([] clears it).'),
})

export { tier as tierNote }
