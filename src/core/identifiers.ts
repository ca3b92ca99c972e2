// The identifier rules, each defined once: what a slug, a memory id, a memory's name, its
// visibility and an organization id may be. The write path, the tools' schemas, the peer check,
// backup import and every exporter ask here, so a name one of them accepts is one all of them
// accept. The sizes are in `limits.ts`.
import { LABEL_CHARS, LIMITS } from './limits'

export const SLUG_MAX_CHARS = LIMITS.slugChars

/**
 * What `slugBase` makes, and a suffix: runs of Unicode letters and digits joined by single
 * `-`. So never `/`, `\`, `.`, a space or a control character: a slug is safe as a file name
 * on every file system an export may land on.
 */
const SLUG_SHAPE = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*$/u

/** Why `value` is not a slug, or null when it is. */
export function slugProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string'
  if (value.length === 0) return 'must not be empty'
  if (value.length > SLUG_MAX_CHARS) return `is ${value.length} characters; the limit is ${SLUG_MAX_CHARS}`
  if (!SLUG_SHAPE.test(value)) return 'must be Unicode letters and digits joined by "-" (no "/", "\\", ".", spaces or control characters)'
  // two slugs that differ only in case would be one file on a case-insensitive file system
  if (value.toLowerCase() !== value) return 'must be lowercase'
  return null
}

export function isSlug(value: unknown): value is string {
  return slugProblem(value) === null
}

/** A memory's id, as `Memory.create` makes or accepts it. */
export const MEMORY_ID = /^[a-z0-9][a-z0-9-]{0,63}$/

export function isMemoryId(value: unknown): value is string {
  return typeof value === 'string' && MEMORY_ID.test(value)
}

/**
 * Why `value` is not a label (a memory's name, an agent's name), or null when it is: text of
 * 1 to 200 characters once trimmed. Each holder stores it trimmed.
 */
export function labelProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string'
  const t = value.trim()
  if (t.length === 0) return 'must not be empty'
  if (t.length > LABEL_CHARS) return `is ${t.length} characters; the limit is ${LABEL_CHARS}`
  return null
}

export function isLabel(value: unknown): value is string {
  return labelProblem(value) === null
}

export const MEMORY_NAME_RULE = `a memory needs a name (1 to ${LABEL_CHARS} characters)`

/**
 * An organization's id: what the sync server's registry makes (`org-` and letters or digits),
 * or an id a person chose. ASCII letters, digits, `_` and `-`, up to 128.
 */
export const ORG_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

/**
 * A room on the sync server, named by its memory's id: it becomes a file name, so only this
 * safe alphabet is taken. Wider than `MEMORY_ID`, as a server also holds rooms of ids that
 * other clients chose.
 */
export const ROOM_NAME = ORG_ID

/** Why a visibility and its organization are not a pair a memory may hold, or null when they are. */
export function visibilityProblem(visibility: unknown, orgId: unknown): string | null {
  if (visibility !== 'private' && visibility !== 'organization') return 'visibility is "private" or "organization"'
  if (visibility === 'organization' && (typeof orgId !== 'string' || !ORG_ID.test(orgId))) {
    return 'an organization-visible memory needs an orgId (letters, digits, "-" or "_", up to 128)'
  }
  return null
}

/** Control characters, and the bidirectional marks that make a name display as another (U+202E). */
export const UNSAFE_NAME_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/**
 * Why `path`, a file's place inside an export (a vault folder, a zip), could land outside it,
 * or null when it cannot: relative, `/`-separated, no empty, `.` or `..` part, no `\` (a
 * separator on Windows and in some unzip tools), no control character.
 */
export function exportPathProblem(path: string): string | null {
  if (path.length === 0) return 'is empty'
  if (path.startsWith('/')) return 'starts with "/"'
  if (path.includes('\\')) return 'holds "\\"'
  if (UNSAFE_NAME_CHARS.test(path)) return 'holds a control or bidirectional character'
  if (path.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'has an empty, "." or ".." part'
  return null
}
