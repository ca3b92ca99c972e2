// Every size limit Cairn holds, each defined once: the write contract, the tools' schemas, the
// peer check, backup import, the exporters and the hosts read their numbers here, so a value
// one of them accepts is one all of them accept. The identifier shapes are in `identifiers.ts`.

/** What one observation (and a file entry) may hold; limits apply to the stored, normalized form. */
export const LIMITS = {
  titleChars: 200,
  contentSoftChars: 2_000,
  contentHardChars: 20_000,
  categoryChars: 64,
  tags: 32,
  tagChars: 64,
  sourceChars: 500,
  entities: 50,
  nameChars: 200,
  typeChars: 64,
  descriptionChars: 2_000,
  /** Example questions an entity carries, and the length of each. */
  queries: 5,
  queryChars: 300,
  relationships: 100,
  relationshipDescriptionChars: 1_000,
  maxWeight: 1_000,
  files: 50,
  pathChars: 512,
  filenameChars: 255,
  mediaTypeChars: 255,
  /** Notes one note may name as replaced. */
  supersedes: 20,
  /** Relationship types a memory may declare single-valued. */
  singleValuedTypes: 100,
  /**
   * The longest slug any reader takes: a base of up to 60 letters from the title (up to 120
   * UTF-16 units when they lie outside the Basic Multilingual Plane) plus a short random suffix.
   */
  slugChars: 200,
} as const

/** A memory's name, an agent's name on a connection, a proposal id: short labels. */
export const LABEL_CHARS = 200

/** A connection token or an organization credential, as presented: longer is none Cairn made. */
export const CREDENTIAL_CHARS = 200

/**
 * A recall's or a note list's text fields (query, category, entity, words) and its cursor.
 * Wider than any stored field: a long question is fine to ask, it is only matched, never stored.
 */
export const RECALL_TEXT_CHARS = 2_000
export const CURSOR_CHARS = 2_000

/** An appendix file, stored or synced. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024

/**
 * Map keys a peer sends (slugs, variant keys, pair ids, paths, authors). Wider than the field
 * each holds, so the field's own rule is what refuses a value, with its own message.
 */
export const MAX_KEY_CHARS = 600

/** How much of a note a recall shows by default, and the range a memory may choose. */
export const SNIPPET_LENGTH = { default: 280, min: 40, max: 2_000 } as const
