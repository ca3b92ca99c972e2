// The write contract: turns untrusted input into a valid observation, or rejects it whole
// with every problem named, so nothing is half-written.
import { MemoryError } from './errors'
import { exportPathProblem, slugProblem } from './identifiers'
import { LIMITS } from './limits'
import { normalizeName, normalizeType, relationshipKey } from './normalize'
import type { AuthoredEntity, AuthoredRelationship, ObservationInput, ObservationPatch, ValidityFields } from './types'

/** How a text field is stored: its limit holds for the stored form, after normalization. */
export interface TextRule {
  max: number
  /** A write leaves no empty value (after normalization). */
  required?: boolean
  /** The stored form of the trimmed input; the identity when absent. */
  form?: (trimmed: string) => string
  /** An entity name: its key (normalizeName) must name something and stay within the limit too. */
  name?: boolean
  /** An appendix path. */
  path?: boolean
}

const lower = (t: string): string => t.toLowerCase()

/**
 * The stored form of a type. normalizeType is applied until it settles (`-1` becomes `_1`,
 * which normalizes to `1`), so what a write stores is a fixed point a peer can recognise.
 */
export function typeForm(type: string): string {
  let t = type
  for (let i = 0; i < 4; i++) {
    const next = normalizeType(t)
    if (next === t) break
    t = next
  }
  return t
}

/**
 * The one definition of what each text field may hold: the write contract stores the form
 * of its input and checks that, and a peer's value must be exactly such a stored form.
 */
export const TEXT = {
  title: { max: LIMITS.titleChars, required: true },
  content: { max: LIMITS.contentHardChars, required: true },
  category: { max: LIMITS.categoryChars, form: lower },
  tag: { max: LIMITS.tagChars, required: true, form: lower },
  source: { max: LIMITS.sourceChars },
  name: { max: LIMITS.nameChars, required: true, name: true },
  entityType: { max: LIMITS.typeChars, form: typeForm },
  description: { max: LIMITS.descriptionChars },
  query: { max: LIMITS.queryChars, required: true },
  relationshipType: { max: LIMITS.typeChars, required: true, form: typeForm },
  relationshipDescription: { max: LIMITS.relationshipDescriptionChars },
  path: { max: LIMITS.pathChars, required: true, path: true },
  filename: { max: LIMITS.filenameChars, required: true },
  mediaType: { max: LIMITS.mediaTypeChars, required: true },
  /** A slug named in `supersedes`. */
  slug: { max: LIMITS.slugChars, required: true },
} as const satisfies Record<string, TextRule>

/** What a write stores for a trimmed input, and what is wrong with it (nothing when the list is empty). */
export function storedText(rule: TextRule, trimmed: string): { value: string; problems: string[] } {
  const value = rule.form ? rule.form(trimmed) : trimmed
  const problems: string[] = []
  const normalized = value !== trimmed ? ' once normalized (case folding, NFKC)' : ''
  if (rule.required && value.length === 0) problems.push(trimmed.length ? `"${trimmed.slice(0, 80)}" has no letters or digits` : 'must not be empty')
  if (value.length > rule.max) problems.push(`is ${value.length} characters${normalized}; the limit is ${rule.max}`)
  if (rule.name && value.length) {
    const key = normalizeName(value)
    if (!key) problems.push(`"${value.slice(0, 80)}" has no letters or digits`)
    else if (key.length > rule.max) problems.push(`is ${key.length} characters once normalized (case folding, NFKC); the limit is ${rule.max}`)
  }
  if (rule.path && value.length && !isValidFilePath(value)) {
    problems.push(`"${value.slice(0, 80)}" is not a valid appendix path (relative, "/"-separated, no "." or ".." parts, no control or bidirectional characters)`)
  }
  return { value, problems }
}

/** Why `value` is not what a write stores for this field, or null when it is. */
export function storedTextProblem(rule: TextRule, value: string): string | null {
  // the stored form is the value itself, so its length bounds the work
  if (value.length > rule.max) return `is ${value.length} characters; the limit is ${rule.max}`
  if (value !== value.trim()) return 'has surrounding spaces, which no write leaves'
  const stored = storedText(rule, value)
  if (stored.problems.length) return stored.problems[0]!
  if (stored.value !== value) return `is not in the form a write stores ("${stored.value.slice(0, 80)}")`
  return null
}

/** An ISO 8601 date as a write stores it (Date.toISOString), or null. */
export function isStoredDate(value: string): boolean {
  if (!ISO_DATE.test(value)) return false
  const ms = Date.parse(value)
  return Number.isFinite(ms) && new Date(ms).toISOString() === value
}

export interface Issue {
  path: string
  message: string
}

const INPUT_FIELDS = new Set(['title', 'content', 'category', 'tags', 'observedAt', 'confidence', 'source', 'entities', 'relationships', 'files', 'validFrom', 'validTo', 'supersedes'])
const PATCH_FIELDS = new Set([...INPUT_FIELDS, 'removeEntities', 'removeRelationships'])
const ENTITY_FIELDS = new Set(['name', 'type', 'description', 'queries'])
const RELATIONSHIP_FIELDS = new Set(['source', 'type', 'target', 'description', 'weight', 'validFrom', 'validTo'])
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Reads only own fields, so `__proto__` and friends in JSON input can never reach the model. */
export function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined
}

function checkFields(obj: Record<string, unknown>, allowed: Set<string>, path: string, issues: Issue[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) issues.push({ path: path ? `${path}.${key}` : key, message: `unknown field "${key}"; allowed: ${[...allowed].join(', ')}` })
  }
}

/** Reads a text field, stores its form and reports every problem with it at `path`. */
function text(value: unknown, path: string, issues: Issue[], rule: TextRule, fallback = ''): string {
  if (value === undefined || value === null) {
    if (rule.required) issues.push({ path, message: 'is required' })
    return fallback
  }
  if (typeof value !== 'string') {
    issues.push({ path, message: `must be a string, got ${Array.isArray(value) ? 'array' : typeof value}` })
    return fallback
  }
  const { value: stored, problems } = storedText(rule, value.trim())
  for (const message of problems) issues.push({ path, message })
  return stored
}

function stringList(value: unknown, path: string, issues: Issue[], maxItems: number, rule: TextRule): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be an array of strings' })
    return []
  }
  if (value.length > maxItems) issues.push({ path, message: `has ${value.length} items; the limit is ${maxItems}` })
  const out: string[] = []
  value.forEach((item, i) => {
    const s = text(item, `${path}[${i}]`, issues, rule)
    if (s && !out.includes(s)) out.push(s)
  })
  return out
}

export function parseDate(value: unknown, path: string, issues: Issue[]): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || !ISO_DATE.test(value.trim())) {
    issues.push({ path, message: 'must be an ISO 8601 date such as 2026-03-14 or 2026-03-14T09:30:00Z' })
    return undefined
  }
  const ms = Date.parse(value.trim())
  if (!Number.isFinite(ms)) {
    issues.push({ path, message: `is not a real date: ${value}` })
    return undefined
  }
  return new Date(ms).toISOString()
}

/**
 * The one rule on a validity interval: half-open, `[validFrom, validTo)`, so its end comes after
 * its start. Stored dates (Date.toISOString) compare as strings. Null when the pair is fine.
 */
export function intervalProblem(validFrom: string | undefined, validTo: string | undefined): string | null {
  if (validFrom === undefined || validTo === undefined || validFrom < validTo) return null
  return `must be after validFrom (${validFrom}): a validity interval is [validFrom, validTo)`
}

/**
 * Reads `validFrom` / `validTo` (and, for a note, `supersedes`) from `raw`, returning only the
 * fields given, so a note or edge without them stores none.
 */
function validityOf(raw: Record<string, unknown>, at: string, issues: Issue[], withSupersedes: boolean): ValidityFields {
  const out: ValidityFields = {}
  const prefix = at ? `${at}.` : ''
  const validFrom = parseDate(own(raw, 'validFrom'), `${prefix}validFrom`, issues)
  const validTo = parseDate(own(raw, 'validTo'), `${prefix}validTo`, issues)
  if (validFrom !== undefined) out.validFrom = validFrom
  if (validTo !== undefined) out.validTo = validTo
  const problem = intervalProblem(validFrom, validTo)
  if (problem) issues.push({ path: `${prefix}validTo`, message: problem })
  if (withSupersedes) {
    const supersedes = stringList(own(raw, 'supersedes'), `${prefix}supersedes`, issues, LIMITS.supersedes, TEXT.slug)
    // each as given: a slug is never padded, so " a-b " names no note
    const given = own(raw, 'supersedes')
    if (Array.isArray(given)) {
      given.forEach((slug, i) => {
        const problem = typeof slug === 'string' ? slugProblem(slug) : null
        if (problem) issues.push({ path: `${prefix}supersedes[${i}]`, message: problem })
      })
    }
    if (supersedes.length) out.supersedes = supersedes
  }
  return out
}

function confidence(value: unknown, issues: Issue[]): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    issues.push({ path: 'confidence', message: 'must be a number from 0 to 1' })
    return undefined
  }
  return value
}

function filePath(value: unknown, path: string, issues: Issue[]): string {
  return text(value, path, issues, TEXT.path)
}

/** An appendix path: one an export can place inside its folder as it is. */
export function isValidFilePath(p: string): boolean {
  return exportPathProblem(p) === null
}

function entityList(value: unknown, issues: Issue[], path = 'entities'): AuthoredEntity[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be an array of { name, type, description, queries? }' })
    return []
  }
  if (value.length > LIMITS.entities) issues.push({ path, message: `has ${value.length} entities; the limit is ${LIMITS.entities}: split the note` })
  const seen = new Set<string>()
  const out: AuthoredEntity[] = []
  value.forEach((raw, i) => {
    const at = `${path}[${i}]`
    if (!isPlainObject(raw)) {
      issues.push({ path: at, message: 'must be an object { name, type, description }' })
      return
    }
    checkFields(raw, ENTITY_FIELDS, at, issues)
    const name = text(own(raw, 'name'), `${at}.name`, issues, TEXT.name)
    const key = normalizeName(name)
    // a description may be left out when the entity already exists (checkEndpoints makes sure of it)
    const description = text(own(raw, 'description'), `${at}.description`, issues, TEXT.description)
    const type = text(own(raw, 'type'), `${at}.type`, issues, TEXT.entityType) || (description ? DEFAULT_ENTITY_TYPE : '')
    const queries = stringList(own(raw, 'queries'), `${at}.queries`, issues, LIMITS.queries, TEXT.query)
    if (key && seen.has(key)) issues.push({ path: `${at}.name`, message: `entity "${name}" is listed twice in this observation` })
    if (key) seen.add(key)
    out.push({ name, type, description, queries })
  })
  return out
}

function relationshipList(value: unknown, issues: Issue[], path = 'relationships'): AuthoredRelationship[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be an array of { source, type, target, description?, weight? }' })
    return []
  }
  if (value.length > LIMITS.relationships) issues.push({ path, message: `has ${value.length} relationships; the limit is ${LIMITS.relationships}` })
  const out: AuthoredRelationship[] = []
  value.forEach((raw, i) => {
    const at = `${path}[${i}]`
    if (!isPlainObject(raw)) {
      issues.push({ path: at, message: 'must be an object { source, type, target }' })
      return
    }
    checkFields(raw, RELATIONSHIP_FIELDS, at, issues)
    const source = text(own(raw, 'source'), `${at}.source`, issues, TEXT.name)
    const target = text(own(raw, 'target'), `${at}.target`, issues, TEXT.name)
    const type = text(own(raw, 'type'), `${at}.type`, issues, TEXT.relationshipType)
    const description = text(own(raw, 'description'), `${at}.description`, issues, TEXT.relationshipDescription)
    let weight = 1
    const w = own(raw, 'weight')
    if (w !== undefined && w !== null) {
      if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > LIMITS.maxWeight) issues.push({ path: `${at}.weight`, message: `must be a number above 0 and at most ${LIMITS.maxWeight}` })
      else weight = w
    }
    out.push({ source, type, target, description, weight, ...validityOf(raw, at, issues, false) })
  })
  return out
}

/** The fields an observation carries after validation, before identity and timestamps are added. */
export interface ValidObservation {
  title: string
  content: string
  category: string
  tags: string[]
  observedAt: string | undefined
  confidence: number
  source: string
  entities: AuthoredEntity[]
  relationships: AuthoredRelationship[]
  files: string[]
  warnings: Array<{ code: 'long_content'; message: string }>
  /** Present only when given. */
  validFrom?: string
  validTo?: string
  supersedes?: string[]
}

function fail(issues: Issue[], what: string): never {
  const tooLarge = issues.find((i) => i.path === 'content' && i.message.includes('the limit'))
  const code = tooLarge && issues.length === 1 ? 'too_large' : 'invalid_write'
  const missing = issues.filter((i) => i.path.endsWith('.description') && i.message.includes('needs a non-empty description'))
  const advice = code === 'too_large' ? ': split it into several observations and keep the source in the appendix' : ''
  throw new MemoryError(code, `${what} rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}${advice}`, {
    issues,
    ...(missing.length ? { entitiesWithoutDescription: missing.map((m) => m.message.match(/entity "(.*)" needs/)?.[1] ?? m.path) } : {}),
  })
}

function contentOf(value: unknown, issues: Issue[]): { content: string; warnings: ValidObservation['warnings'] } {
  const warnings: ValidObservation['warnings'] = []
  const content = text(value, 'content', issues, TEXT.content)
  if (content.length > LIMITS.contentSoftChars && content.length <= LIMITS.contentHardChars) {
    warnings.push({
      code: 'long_content',
      message: `content is ${content.length} characters; observations are meant to stay near ${LIMITS.contentSoftChars}. Split it into separate observations and store the source document in the appendix, referenced by path.`,
    })
  }
  return { content, warnings }
}

/** Validates a new observation. Throws `invalid_write` (or `too_large`) naming every problem. */
/**
 * Checks a write against the contract. `entityExists` (by name, after normalization and
 * aliases) lets it also name each new entity that lacks a description.
 */
export function validateObservationInput(input: unknown, entityExists?: (name: string) => boolean): ValidObservation {
  const issues: Issue[] = []
  if (!isPlainObject(input)) fail([{ path: '', message: 'an observation must be an object { title, content, entities, ... }' }], 'write')
  checkFields(input, INPUT_FIELDS, '', issues)
  const title = text(own(input, 'title'), 'title', issues, TEXT.title)
  const { content, warnings } = contentOf(own(input, 'content'), issues)
  const category = text(own(input, 'category'), 'category', issues, TEXT.category) || 'note'
  const tags = stringList(own(input, 'tags'), 'tags', issues, LIMITS.tags, TEXT.tag)
  const observedAt = parseDate(own(input, 'observedAt'), 'observedAt', issues)
  const conf = confidence(own(input, 'confidence'), issues) ?? 1
  const source = text(own(input, 'source'), 'source', issues, TEXT.source)
  const entities = entityList(own(input, 'entities'), issues)
  // reported with every other problem, so a writer fixes them all at once
  if (entityExists) issues.push(...undescribedNewEntities(entities, entityExists))
  const relationships = relationshipList(own(input, 'relationships'), issues)
  const files = (stringListRaw(own(input, 'files'), 'files', issues) ?? []).map((f, i) => filePath(f, `files[${i}]`, issues))
  const validity = validityOf(input, '', issues, true)
  if (issues.length) fail(issues, 'write')
  return { title, content, category, tags, observedAt, confidence: conf, source, entities, relationships, files: [...new Set(files)], warnings, ...validity }
}

function stringListRaw(value: unknown, path: string, issues: Issue[]): unknown[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be an array' })
    return undefined
  }
  if (value.length > LIMITS.files) issues.push({ path, message: `has ${value.length} items; the limit is ${LIMITS.files}` })
  return value
}

export interface ValidPatch {
  fields: Partial<Omit<ValidObservation, 'entities' | 'relationships' | 'warnings' | keyof ValidityFields>>
  /** The validity fields the patch names: a value sets one, null clears it. */
  validity: { [K in keyof ValidityFields]?: ValidityFields[K] | null }
  entities: AuthoredEntity[]
  relationships: AuthoredRelationship[]
  removeEntities: string[]
  removeRelationships: string[]
  warnings: ValidObservation['warnings']
}

/** Validates an update patch; only the given fields are checked and applied. */
export function validatePatch(patch: unknown): ValidPatch {
  const issues: Issue[] = []
  if (!isPlainObject(patch)) fail([{ path: '', message: 'a patch must be an object with the fields to change' }], 'update')
  checkFields(patch, PATCH_FIELDS, '', issues)
  const p = patch as Record<string, unknown> & ObservationPatch
  const fields: ValidPatch['fields'] = {}
  let warnings: ValidObservation['warnings'] = []
  if (own(p, 'title') !== undefined) fields.title = text(own(p, 'title'), 'title', issues, TEXT.title)
  if (own(p, 'content') !== undefined) {
    const c = contentOf(own(p, 'content'), issues)
    fields.content = c.content
    warnings = c.warnings
  }
  if (own(p, 'category') !== undefined) fields.category = text(own(p, 'category'), 'category', issues, TEXT.category) || 'note'
  if (own(p, 'tags') !== undefined) fields.tags = stringList(own(p, 'tags'), 'tags', issues, LIMITS.tags, TEXT.tag)
  if (own(p, 'observedAt') !== undefined) {
    const d = parseDate(own(p, 'observedAt'), 'observedAt', issues)
    if (d) fields.observedAt = d
  }
  if (own(p, 'confidence') !== undefined) {
    const c = confidence(own(p, 'confidence'), issues)
    if (c !== undefined) fields.confidence = c
  }
  if (own(p, 'source') !== undefined) fields.source = text(own(p, 'source'), 'source', issues, TEXT.source)
  if (own(p, 'files') !== undefined) fields.files = [...new Set((stringListRaw(own(p, 'files'), 'files', issues) ?? []).map((f, i) => filePath(f, `files[${i}]`, issues)))]
  const entities = entityList(own(p, 'entities'), issues)
  const relationships = relationshipList(own(p, 'relationships'), issues)
  const removeEntities = stringList(own(p, 'removeEntities'), 'removeEntities', issues, LIMITS.entities, TEXT.name).map(normalizeName)
  const removeRelationships: string[] = []
  const rr = own(p, 'removeRelationships')
  if (rr !== undefined && rr !== null) {
    if (!Array.isArray(rr)) issues.push({ path: 'removeRelationships', message: 'must be an array of { source, type, target }' })
    else
      rr.forEach((raw, i) => {
        const at = `removeRelationships[${i}]`
        if (!isPlainObject(raw)) return void issues.push({ path: at, message: 'must be an object { source, type, target }' })
        const s = text(own(raw, 'source'), `${at}.source`, issues, TEXT.name)
        const t = text(own(raw, 'type'), `${at}.type`, issues, TEXT.relationshipType)
        const g = text(own(raw, 'target'), `${at}.target`, issues, TEXT.name)
        removeRelationships.push(relationshipKey(normalizeName(s), t, normalizeName(g)))
      })
  }
  const given = validityOf(p, '', issues, true)
  const validity: ValidPatch['validity'] = {}
  for (const k of ['validFrom', 'validTo', 'supersedes'] as const) {
    // null (or an empty list) clears the field; absent leaves it
    if (own(p, k) === null || (k === 'supersedes' && Array.isArray(own(p, k)) && !given.supersedes)) validity[k] = null
    else if (given[k] !== undefined) (validity as Record<string, unknown>)[k] = given[k]
  }
  if (issues.length) fail(issues, 'update')
  return { fields, entities, relationships, removeEntities, removeRelationships, warnings, validity }
}

/** Naming an existing entity needs no description; a new one does. */
function undescribedNewEntities(entities: AuthoredEntity[], exists: (name: string) => boolean): Issue[] {
  const issues: Issue[] = []
  entities.forEach((e, i) => {
    if (!e.description && e.name && normalizeName(e.name) && !exists(e.name)) {
      issues.push({ path: `entities[${i}].description`, message: `entity "${e.name}" needs a non-empty description: it is new to this memory, and a description is what recall matches against` })
    }
  })
  return issues
}

/**
 * An entity named without a description must already exist (after aliases); every
 * relationship endpoint must be an entity of the same observation or an existing one;
 * self-loops are meaningless and rejected.
 */
export function checkEndpoints(
  entities: AuthoredEntity[],
  relationships: AuthoredRelationship[],
  resolve: (key: string) => string,
  exists: (key: string) => boolean,
  what: 'write' | 'update',
): void {
  const issues: Issue[] = undescribedNewEntities(entities, (name) => exists(resolve(normalizeName(name))))
  const local = new Set(entities.filter((e) => e.description || exists(resolve(normalizeName(e.name)))).map((e) => resolve(normalizeName(e.name))))
  const seen = new Set<string>()
  relationships.forEach((r, i) => {
    const s = resolve(normalizeName(r.source))
    const t = resolve(normalizeName(r.target))
    for (const [end, key, name] of [['source', s, r.source], ['target', t, r.target]] as const) {
      if (!local.has(key) && !exists(key)) {
        issues.push({ path: `relationships[${i}].${end}`, message: `"${name}" is neither an entity of this observation nor an existing one: add it to entities with a description` })
      }
    }
    if (s === t) issues.push({ path: `relationships[${i}]`, message: `"${r.source}" ${r.type} "${r.target}" connects an entity to itself` })
    const k = relationshipKey(s, r.type, t)
    if (seen.has(k)) issues.push({ path: `relationships[${i}]`, message: `"${r.source}" ${r.type} "${r.target}" is listed twice` })
    seen.add(k)
  })
  if (issues.length) fail(issues, what)
}

/** An appendix file's metadata as a write stores it (the bytes, size and hash are the engine's). */
export interface ValidFileFields {
  path: string
  filename: string
  type: string
  description: string
}

/**
 * The type a described entity written without one is given. It is a default, not a choice:
 * the graph's type rule lets any explicitly given type win over it.
 */
export const DEFAULT_ENTITY_TYPE = 'thing'

/** The media type of a file stored without one. */
export const DEFAULT_MEDIA_TYPE = 'application/octet-stream'

/**
 * Judges a file's metadata by the same text rules as an observation's fields: what a write
 * stores here is exactly what the peer check (`sync/validate` checkFile) accepts. A missing
 * filename is the path's last part, a missing type `application/octet-stream`.
 */
export function validateFileFields(input: Record<string, unknown>): { value: ValidFileFields; issues: Issue[] } {
  const issues: Issue[] = []
  const text = (key: string, rule: TextRule, fallback?: () => string): string => {
    const raw = own(input, key)
    if (raw === undefined && fallback) return checkedText(key, rule, fallback(), issues)
    if (typeof raw !== 'string') {
      issues.push({ path: key, message: 'must be a string' })
      return ''
    }
    // an empty optional field takes its default, as a missing one does
    if (fallback && raw.trim() === '') return checkedText(key, rule, fallback(), issues)
    return checkedText(key, rule, raw, issues)
  }
  const path = text('path', TEXT.path)
  const filename = text('filename', TEXT.filename, () => path.split('/').pop() ?? '')
  const type = text('type', TEXT.mediaType, () => DEFAULT_MEDIA_TYPE)
  const description = text('description', TEXT.description, () => '')
  return { value: { path, filename, type, description }, issues }
}

function checkedText(key: string, rule: TextRule, raw: string, issues: Issue[]): string {
  const { value, problems } = storedText(rule, raw.trim())
  for (const p of problems) issues.push({ path: key, message: `${key} ${p}` })
  return value
}
