// The data model of a memory. Observations are the source of truth; entities and
// relationships are derived from them (plus aliases) and never written directly.

export type Tier = 'read' | 'read_write' | 'full'
export type Visibility = 'private' | 'organization'
/** An organization member: an agent, or a device a person uses. */
export type MemberKind = 'agent' | 'device'

/** Fixed at memory creation: changing any field makes old and new entries mutually unsearchable. */
/** The retrieval embedder id of a memory that ranks by BM25 alone. */
export const BM25_ONLY = 'bm25-only'

export interface RetrievalConfig {
  /** Identifies the embedding model, e.g. `cairn-glove-100d@1` or `bm25-only`. */
  embedder: string
  /** sha256 of the model bytes (empty for `bm25-only`). */
  modelChecksum: string
  /** Vector dimensions (0 for `bm25-only`). */
  dimensions: number
  /** Hybrid weights; they sum to 1. */
  weights: { text: number; vector: number }
  /** Characters of an observation shown in a recall snippet. */
  snippetLength: number
}

export interface MemoryInfo {
  id: string
  name: string
  visibility: Visibility
  orgId: string | null
  createdAt: string
  retrieval: RetrievalConfig
}

export interface EntityInput {
  name: string
  type?: string
  /** Required for an entity new to the memory; may be left out when naming an existing one. */
  description?: string
  /** A couple of questions this entity should answer, folded into matching. */
  queries?: string[]
}

export interface RelationshipInput {
  source: string
  type: string
  target: string
  description?: string
  /** Strength of the edge as this observation states it; default 1. */
  weight?: number
  /** When this edge held in the world, if not when its note's facts held (ISO 8601; see docs/time.md). */
  validFrom?: string
  validTo?: string
}

/**
 * When a note's facts held in the world, apart from when it was noted (`observedAt`), and the
 * notes whose facts it replaces. Intervals are half-open, `[validFrom, validTo)`.
 */
export interface ValidityFields {
  /** ISO 8601; default: the note's `observedAt`. */
  validFrom?: string
  /** ISO 8601, after `validFrom`; default: open-ended. */
  validTo?: string
  /** Slugs of the notes this one replaces from its start; they are kept, derived as superseded. */
  supersedes?: string[]
}

export interface ObservationInput extends ValidityFields {
  title: string
  content: string
  category?: string
  tags?: string[]
  /** ISO 8601 date or date-time; default: now. */
  observedAt?: string
  /** 0..1; default 1. */
  confidence?: number
  source?: string
  entities?: EntityInput[]
  relationships?: RelationshipInput[]
  /** Appendix file paths this observation refers to. */
  files?: string[]
}

export interface ObservationPatch {
  title?: string
  content?: string
  category?: string
  tags?: string[]
  observedAt?: string
  confidence?: number
  source?: string
  /** Unioned with the current entities by normalized name; the patch wins on conflicts. */
  entities?: EntityInput[]
  /** Unioned with the current relationships by (source, type, target); the patch wins. */
  relationships?: RelationshipInput[]
  files?: string[]
  /** Entity names to remove from this observation (with the relationships that touch them). */
  removeEntities?: string[]
  /** Relationships to remove, matched by normalized (source, type, target). */
  removeRelationships?: Array<Pick<RelationshipInput, 'source' | 'type' | 'target'>>
  /** Replaces the note's validity; null clears it. */
  validFrom?: string | null
  validTo?: string | null
  /** Replaces the list of notes this one supersedes; null or [] clears it. */
  supersedes?: string[] | null
}

/** An entity as one observation authored it (already validated). */
export interface AuthoredEntity {
  name: string
  type: string
  description: string
  queries: string[]
}

export interface AuthoredRelationship {
  source: string
  type: string
  target: string
  description: string
  weight: number
  /** Present only when the author gave them. */
  validFrom?: string
  validTo?: string
}

/** Validity fields are present only when the author gave them, so notes without them stay as they were. */
export interface Observation extends ValidityFields {
  slug: string
  title: string
  content: string
  category: string
  tags: string[]
  observedAt: string
  confidence: number
  source: string
  entities: AuthoredEntity[]
  relationships: AuthoredRelationship[]
  files: string[]
  createdBy: string
  createdAt: string
  updatedAt: string
}

export interface Entity {
  /** Normalized name after aliases: the identity. */
  key: string
  name: string
  type: string
  /** The description shown: the one most of its notes give (see the description rule in core/graph). */
  description: string
  /** Other descriptions it was given, most given first: they still match a query. */
  descriptions: string[]
  queries: string[]
  degree: number
  /** Slugs of the observations that name this entity, sorted. */
  observations: string[]
}

export interface Relationship {
  /** `${source}\u0000${type}\u0000${target}` over normalized keys. */
  key: string
  source: string
  type: string
  target: string
  description: string
  /** Sum of the weights the backing observations give it. */
  weight: number
  observations: string[]
}

/** variant key -> canonical key, written when a merge is accepted. */
export interface Alias {
  variant: string
  canonical: string
  createdAt: string
}

export interface MergeEvidence {
  signal:
    | 'same_core_name'
    | 'acronym'
    | 'token_reorder'
    | 'title_or_suffix'
    | 'similar_description'
    | 'shared_neighbors'
    | 'edit_distance'
    /** A supersession: the relationship type holds one target at a time. */
    | 'single_valued'
  detail: string
  weight: number
}

/** What a `supersede` proposal suggests: the newer note replaces the older from where it starts. */
export interface SupersedeDetail {
  /** Slug of the note stating the older edge. */
  older: string
  /** Slug of the note stating the newer edge. */
  newer: string
  /** The edge's source entity's name and its single-valued type. */
  source: string
  type: string
  /** The older and the newer target's names. */
  targets: [string, string]
  /** Where the newer note starts (ISO 8601), when it has a start. */
  from?: string
}

/**
 * A consolidation proposal: an entity merge, or (`kind: 'supersede'`) a note superseding
 * another because a single-valued relationship gained a second target.
 */
export interface MergeProposal {
  /** Deterministic from the pair, so every device names a proposal the same way. */
  id: string
  kind: 'merge' | 'supersede'
  /** The two entity keys, sorted; for a supersession, the older and the newer note's slugs. */
  pair: [string, string]
  /** The two names; for a supersession, the two edges in words. */
  names: [string, string]
  /** Suggested canonical key (one of pair); for a supersession, the newer note's slug. */
  canonical: string
  score: number
  evidence: MergeEvidence[]
  status: 'open' | 'accepted' | 'rejected'
  createdAt: string
  /** Present on a `supersede` proposal. */
  supersede?: SupersedeDetail
}

/** A connection as this device stores it; agents hold a `Connection` handle made from it. */
export interface ConnectionRecord {
  id: string
  memoryId: string
  agent: string
  tier: Tier
  /** sha256 of the token, hex; the token itself is never stored. */
  tokenHash: string
  createdAt: string
  revokedAt: string | null
  /** Kept on this device only (the app's own connection), never shared with the memory's other holders. */
  localOnly?: boolean
  /** When an agent last called through it on this device (to the minute); never shared. */
  lastUsedAt?: string
}

/** A connection as listed: everything but its token's hash. */
export type ConnectionInfo = Omit<ConnectionRecord, 'tokenHash'>

export interface AppendixFile {
  path: string
  filename: string
  type: string
  size: number
  description: string
  createdBy: string
  createdAt: string
  sha256: string
}

export interface RecallLimits {
  entities: number
  relationships: number
  observations: number
  /** Upper bound on the JSON size of the whole response. */
  bytes: number
}

export interface RecallRequest {
  query?: string
  category?: string
  tags?: string[]
  from?: string
  to?: string
  entity?: string
  limits?: Partial<RecallLimits>
  /** Structural recall only: the `nextCursor` of the previous page. */
  cursor?: string
  /** Answer as the facts held at this date (ISO 8601): notes and edges valid then. Default: now. */
  asOf?: string
  /** `current` (default) leaves out superseded and expired notes and edges, counting them; `all` returns them marked. */
  history?: 'current' | 'all'
}

/** A note's or edge's place in world time, on what recall and inspect return (see docs/time.md). */
export interface TimeMarks {
  /** When its facts started to hold, when the note says (or another note's supersession implies). */
  validFrom?: string
  /** When they stopped holding: its own end, or where a note superseding it begins. */
  validTo?: string
  /** The notes that replaced it. */
  supersededBy?: string[]
  /** False when `history: 'all'` returns it though it does not hold at the time asked. */
  current?: false
}

export interface RecalledEntity {
  name: string
  key: string
  type: string
  description: string
  degree: number
  score: number
  /** `match`: ranked by the query or filter; `neighbor`: pulled in by the 1-hop expansion. */
  via: 'match' | 'neighbor'
  /**
   * Semantic recall, a matched entity: `strong` when it (or a note naming it) holds most of what
   * the query asks, `weak` when only part of it (one word of several, a common one).
   */
  match?: 'strong' | 'weak'
}

export interface RecalledRelationship extends Pick<TimeMarks, 'current'> {
  source: string
  type: string
  target: string
  description: string
  weight: number
}

export interface Snippet extends TimeMarks {
  slug: string
  title: string
  category: string
  tags: string[]
  observedAt: string
  snippet: string
  truncated: boolean
  /** Names of the recalled entities this observation backs; empty for a note that names no entity, matched on its own text. */
  entities: string[]
}

export interface Truncation {
  entities: number
  relationships: number
  observations: number
  note: string
}

export interface RecallResult {
  mode: 'semantic' | 'structural'
  entities: RecalledEntity[]
  relationships: RecalledRelationship[]
  observations: Snippet[]
  truncation: Truncation | null
  /** Structural recall: where the next page starts, when observations were left after this one. */
  nextCursor?: string
  /** Notes left out because they were superseded or did not hold at the time asked (absent when none). */
  superseded?: number
  /**
   * Semantic recall: how well the memory answers the query, judged by its words (or theirs) in
   * descriptions and notes, never by vector nearness alone. `none` comes with no entities and no
   * observations; `weak` marks each entity that holds only part of the query.
   */
  match?: 'strong' | 'weak' | 'none'
  /** Semantic recall: the signals that ranked it. */
  signals?: RecallSignals
  /** Semantic recall, when the match is `none` or `weak`: what it means, in words an agent reads. */
  message?: string
  /**
   * Present while this device is still receiving the memory from its sync server (a first sync
   * of a large memory, in pieces): the answer comes from the `received` pieces of `of` this device
   * has applied so far (0 before the first).
   */
  syncing?: { received: number; of: number }
}

/** What ranked a semantic recall: words always (BM25), vectors only in a hybrid memory, and from which model. */
export interface RecallSignals {
  words: true
  vectors: boolean
  /** The embedder's id, for a hybrid memory. */
  model?: string
}

export interface Neighborhood {
  entity: string
  key: string
  degree: number
  relationships: RecalledRelationship[]
  neighbors: string[]
  /** True when the relationship list was capped. */
  capped: boolean
}

export interface PossibleDuplicate {
  name: string
  existing: string
  reason: string
}

export interface WriteWarning {
  code: 'long_content' | 'unknown_file' | 'ignored_field' | 'no_entity'
  message: string
}

export interface WriteResult {
  slug: string
  warnings: WriteWarning[]
  neighborhoods: Neighborhood[]
  possibleDuplicates: PossibleDuplicate[]
}

export interface ReviewHint {
  entity: string
  previousDescription: string
  description: string
  relationships: RecalledRelationship[]
  message: string
}

export interface UpdateResult {
  observation: Observation
  warnings: WriteWarning[]
  reviewHints: ReviewHint[]
  neighborhoods: Neighborhood[]
}

export interface DeleteResult {
  slug: string
  pruned: { entities: string[]; relationships: RecalledRelationship[] }
}

export interface EntityDetail {
  entity: Entity
  outgoing: RecalledRelationship[]
  incoming: RecalledRelationship[]
  observations: Array<Pick<Observation, 'slug' | 'title' | 'observedAt' | 'category'>>
  aliases: string[]
  /** The entity's notes in world-time order (start, then slug), each with its interval and what superseded it. */
  history: Array<Pick<Observation, 'slug' | 'title' | 'observedAt'> & Omit<TimeMarks, 'current'> & { current: boolean }>
}
