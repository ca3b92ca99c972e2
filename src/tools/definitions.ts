// The agent-facing tools: one per connection operation, each a name, a description written for
// a model, a zod schema, and a runner. JSON Schema is derived from the zod schema, never written.
import { z } from 'zod'
import { LIMITS } from '../core/limits'
import { OPERATION_TIER, type Operation } from '../core/access'
import type { Connection } from '../engine/connection'
import type { Tier } from '../core/types'
import { decodeData, encodeData } from './file-data'
import * as s from './schemas'

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string
  /** The connection operation it runs; its tier is the tier the tool needs. */
  operation: Operation
  description: string
  schema: S
  run(conn: Connection, args: z.output<S>): Promise<unknown>
}

function tool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition {
  return def as unknown as ToolDefinition
}

const WRITE_GUIDE = [
  'Record one observation: a short note plus the entities it is about and the relationships among them.',
  `Keep content near ${LIMITS.contentSoftChars} characters (one fact or event); split longer material into several observations and keep the source document in the appendix (store_file), referenced by path in files.`,
  'Every entity new to this memory needs a non-empty description: recall matches queries against entity descriptions first, so the description is how this knowledge is found again. An entity that already exists may be named without one; it keeps its best description.',
  'Add relationships (e.g. person works_on project, project owned_by organization): they are what lets a recall about one entity bring back the others connected to it.',
  'Reuse names that earlier responses returned; naming an existing entity merges into it. The response lists each touched entity\'s neighborhood and possible duplicates so you can correct names.',
  'When a fact replaces an earlier one (a new employer, a new address), pass the earlier note\'s slug in supersedes, and validFrom when the new fact began: the old note is kept as history, and recall leaves it out.',
].join(' ')

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: 'write',
    operation: 'write',
    description: WRITE_GUIDE,
    schema: s.writeArgs,
    run: (c, a) => c.write(a),
  }),
  tool({
    name: 'update',
    operation: 'update',
    description:
      'Edit an observation by slug. Only the fields you pass change; entities and relationships are merged into the current ones (yours win on conflicts), and removal is explicit with removeEntities/removeRelationships. If an entity description changes materially, the response lists its relationships as review hints so you can refresh them.',
    schema: s.updateArgs,
    run: (c, { slug, ...patch }) => c.update(slug, patch),
  }),
  tool({
    name: 'delete',
    operation: 'delete',
    description: 'Delete an observation by slug. Entities and relationships only it backed are pruned; anything another observation names survives. The response lists what was pruned.',
    schema: s.slugArgs,
    run: (c, a) => c.delete(a.slug),
  }),
  tool({
    name: 'recall',
    operation: 'recall',
    description:
      'Retrieve what the memory knows. With query: entities ranked by their descriptions, their 1-hop neighbors (so asking about a person also returns their projects and organizations), the relationships among them, and a short snippet per backing observation. Without query: observations filtered by category, tags, from/to or entity, newest first; pass nextCursor as cursor for the next page. The payload is capped; if truncation is set, narrow with category, tags, from/to or entity rather than raising limits. Snippets marked truncated can be read whole with get_observation. A query recall says how well the memory answers it: match "strong", "weak" (entities marked weak hold only part of the query: leads, not answers) or "none" (nothing matches: no entities, no observations, and a message; do not answer from this memory). Notes that name no entity come back on their own words with an empty entities list; signals says what ranked the recall. Superseded or expired facts are left out and counted in superseded; asOf answers as of a date, history: all returns them marked.',
    schema: s.recallArgs,
    run: (c, a) => c.recall(a),
  }),
  tool({
    name: 'get_observation',
    operation: 'getObservation',
    description: 'Read one observation in full by slug, with its entities, relationships and files.',
    schema: s.slugArgs,
    run: (c, a) => c.getObservation(a.slug),
  }),
  tool({
    name: 'inspect_entity',
    operation: 'inspect',
    description: 'Everything about one entity: its description, outgoing and incoming relationships, the observations that name it, the variant names merged into it, and its history: its notes in the order their facts held, with what superseded them.',
    schema: s.inspectArgs,
    run: (c, a) => c.inspect(a.name),
  }),
  tool({
    name: 'list_files',
    operation: 'listFiles',
    description: 'List the appendix files (source documents kept alongside observations) with path, type, size and description.',
    schema: s.emptyArgs,
    run: (c) => c.listFiles(),
  }),
  tool({
    name: 'read_file',
    operation: 'readFile',
    description: 'Read one appendix file by path. Text comes back as utf8, anything else as base64 (see encoding).',
    schema: s.readFileArgs,
    run: async (c, a) => {
      const { file, data } = await c.readFile(a.path)
      return { file, ...encodeData(data, file.type) }
    },
  }),
  tool({
    name: 'store_file',
    operation: 'storeFile',
    description: 'Keep a source document in the appendix under a path, so observations can stay short and cite it in files.',
    schema: s.storeFileArgs,
    run: (c, { data, encoding, ...rest }) => c.storeFile({ ...rest, data: decodeData(data, encoding ?? 'utf8') }),
  }),
  tool({
    name: 'consolidate',
    operation: 'consolidate',
    description: 'Review the memory for entities recorded under variant names (e.g. "IBM" and "International Business Machines") and return merge proposals with evidence. Nothing is applied: accept or reject each proposal.',
    schema: s.emptyArgs,
    run: (c) => c.consolidate(),
  }),
  tool({
    name: 'list_proposals',
    operation: 'listProposals',
    description: 'List the merge proposals consolidation produced, with their status (open, accepted, rejected).',
    schema: s.emptyArgs,
    run: (c) => c.listProposals(),
  }),
  tool({
    name: 'accept_proposal',
    operation: 'acceptProposal',
    description: 'Accept a merge proposal: the variant becomes an alias of the canonical entity, every relationship moves to it, and self-loops are dropped.',
    schema: s.acceptProposalArgs,
    run: (c, a) => c.acceptProposal(a.id, a.canonical ? { canonical: a.canonical } : {}),
  }),
  tool({
    name: 'reject_proposal',
    operation: 'rejectProposal',
    description: 'Reject a merge proposal when the two names are different things: both entities stay separate and unchanged.',
    schema: s.proposalArgs,
    run: (c, a) => c.rejectProposal(a.id),
  }),
  tool({
    name: 'list_single_valued',
    operation: 'listSingleValued',
    description: 'List the relationship types this memory declares single-valued: types that hold one target at a time (works_at, lives_in), for which consolidate proposes that a newer edge supersede the older.',
    schema: s.emptyArgs,
    run: (c) => c.listSingleValued(),
  }),
  tool({
    name: 'set_single_valued',
    operation: 'setSingleValued',
    description: 'Declare which relationship types hold one target at a time (e.g. works_at, lives_in), replacing the earlier list. When a source then holds two current edges of such a type, consolidate proposes that the later note supersede the earlier (kind "supersede"), to accept or reject like a merge. The declaration is the memory owner\'s and syncs to every device.',
    schema: s.setSingleValuedArgs,
    run: (c, a) => c.setSingleValued(a.types),
  }),
]

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]))

export function findTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name)
}

export function toolTier(t: ToolDefinition): Tier {
  return OPERATION_TIER[t.operation]
}

/** JSON Schema of a tool's input, as a client lists it. */
export function toolInputSchema(t: ToolDefinition): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(t.schema, { io: 'input' }) as Record<string, unknown>
  return schema
}

/** The tool list for a listing: descriptions end with the tier each tool needs. */
export function toolListing(): Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> {
  return TOOLS.map((t) => ({ name: t.name, description: `${t.description} ${s.tierNote(toolTier(t))}`, inputSchema: toolInputSchema(t) }))
}
