// The write contract: turns untrusted input into a valid observation, or rejects it whole
// with every problem named, so nothing is half-written.
import { MemoryError } from './errors'
import { normalizeName, normalizeType, relationshipKey } from './normalize'
import type { AuthoredEntity, AuthoredRelationship, ObservationInput, ObservationPatch } from './types'

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
  queries: 5,
  queryChars: 300,
  relationships: 100,
  relationshipDescriptionChars: 1_000,
  maxWeight: 1_000,
  files: 50,
  pathChars: 512,
} as const

export interface Issue {
  path: string
  message: string
}

const INPUT_FIELDS = new Set(['title', 'content', 'category', 'tags', 'observedAt', 'confidence', 'source', 'entities', 'relationships', 'files'])
const PATCH_FIELDS = new Set([...INPUT_FIELDS, 'removeEntities', 'removeRelationships'])
const ENTITY_FIELDS = new Set(['name', 'type', 'description', 'queries'])
const RELATIONSHIP_FIELDS = new Set(['source', 'type', 'target', 'description', 'weight'])
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

function text(value: unknown, path: string, issues: Issue[], opts: { required: boolean; max: number; fallback?: string }): string {
  if (value === undefined || value === null) {
    if (opts.required) issues.push({ path, message: 'is required' })
    return opts.fallback ?? ''
  }
  if (typeof value !== 'string') {
    issues.push({ path, message: `must be a string, got ${Array.isArray(value) ? 'array' : typeof value}` })
    return opts.fallback ?? ''
  }
  const trimmed = value.trim()
  if (opts.required && trimmed.length === 0) issues.push({ path, message: 'must not be empty' })
  if (trimmed.length > opts.max) issues.push({ path, message: `is ${trimmed.length} characters; the limit is ${opts.max}` })
  return trimmed
}

function stringList(value: unknown, path: string, issues: Issue[], maxItems: number, maxChars: number): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be an array of strings' })
    return []
  }
  if (value.length > maxItems) issues.push({ path, message: `has ${value.length} items; the limit is ${maxItems}` })
  const out: string[] = []
  value.forEach((item, i) => {
    const s = text(item, `${path}[${i}]`, issues, { required: true, max: maxChars })
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

function confidence(value: unknown, issues: Issue[]): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    issues.push({ path: 'confidence', message: 'must be a number from 0 to 1' })
    return undefined
  }
  return value
}

function filePath(value: unknown, path: string, issues: Issue[]): string {
  const p = text(value, path, issues, { required: true, max: LIMITS.pathChars })
  if (p && !isValidFilePath(p)) issues.push({ path, message: `"${p}" is not a valid appendix path (relative, "/"-separated, no "." or ".." parts, no control or bidirectional characters)` })
  return p
}

/** Control characters, and the bidirectional marks that make a path display as another (U+202E). */
const UNSAFE_PATH_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

export function isValidFilePath(p: string): boolean {
  if (p.startsWith('/') || p.endsWith('/') || p.includes('\\') || UNSAFE_PATH_CHARS.test(p)) return false
  return p.split('/').every((part) => part.length > 0 && part !== '.' && part !== '..')
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
    const name = text(own(raw, 'name'), `${at}.name`, issues, { required: true, max: LIMITS.nameChars })
    const key = normalizeName(name)
    if (name && !key) issues.push({ path: `${at}.name`, message: `"${name}" has no letters or digits` })
    // a description may be left out when the entity already exists (checkEndpoints makes sure of it)
    const description = text(own(raw, 'description'), `${at}.description`, issues, { required: false, max: LIMITS.descriptionChars })
    const type = normalizeType(text(own(raw, 'type'), `${at}.type`, issues, { required: false, max: LIMITS.typeChars })) || (description ? 'thing' : '')
    const queries = stringList(own(raw, 'queries'), `${at}.queries`, issues, LIMITS.queries, LIMITS.queryChars)
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
    const source = text(own(raw, 'source'), `${at}.source`, issues, { required: true, max: LIMITS.nameChars })
    const target = text(own(raw, 'target'), `${at}.target`, issues, { required: true, max: LIMITS.nameChars })
    const type = normalizeType(text(own(raw, 'type'), `${at}.type`, issues, { required: true, max: LIMITS.typeChars }))
    const description = text(own(raw, 'description'), `${at}.description`, issues, { required: false, max: LIMITS.relationshipDescriptionChars })
    let weight = 1
    const w = own(raw, 'weight')
    if (w !== undefined && w !== null) {
      if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > LIMITS.maxWeight) issues.push({ path: `${at}.weight`, message: `must be a number above 0 and at most ${LIMITS.maxWeight}` })
      else weight = w
    }
    out.push({ source, type, target, description, weight })
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
}

function fail(issues: Issue[], what: string): never {
  const tooLarge = issues.find((i) => i.path === 'content' && i.message.includes('the limit'))
  const code = tooLarge && issues.length === 1 ? 'too_large' : 'invalid_write'
  const missing = issues.filter((i) => i.path.endsWith('.description') && i.message.includes('needs a non-empty description'))
  throw new MemoryError(code, `${what} rejected: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, {
    issues,
    ...(missing.length ? { entitiesWithoutDescription: missing.map((m) => m.message.match(/entity "(.*)" needs/)?.[1] ?? m.path) } : {}),
  })
}

function contentOf(value: unknown, issues: Issue[]): { content: string; warnings: ValidObservation['warnings'] } {
  const warnings: ValidObservation['warnings'] = []
  const content = text(value, 'content', issues, { required: true, max: LIMITS.contentHardChars })
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
  const title = text(own(input, 'title'), 'title', issues, { required: true, max: LIMITS.titleChars })
  const { content, warnings } = contentOf(own(input, 'content'), issues)
  const category = text(own(input, 'category'), 'category', issues, { required: false, max: LIMITS.categoryChars }).toLowerCase() || 'note'
  const tags = stringList(own(input, 'tags'), 'tags', issues, LIMITS.tags, LIMITS.tagChars).map((t) => t.toLowerCase())
  const observedAt = parseDate(own(input, 'observedAt'), 'observedAt', issues)
  const conf = confidence(own(input, 'confidence'), issues) ?? 1
  const source = text(own(input, 'source'), 'source', issues, { required: false, max: LIMITS.sourceChars })
  const entities = entityList(own(input, 'entities'), issues)
  // reported with every other problem, so a writer fixes them all at once
  if (entityExists) issues.push(...undescribedNewEntities(entities, entityExists))
  const relationships = relationshipList(own(input, 'relationships'), issues)
  const files = (stringListRaw(own(input, 'files'), 'files', issues) ?? []).map((f, i) => filePath(f, `files[${i}]`, issues))
  checkStoredLengths({ category, tags, entities, relationships }, issues)
  if (issues.length) fail(issues, 'write')
  return { title, content, category, tags: [...new Set(tags)], observedAt, confidence: conf, source, entities, relationships, files: [...new Set(files)], warnings }
}

/**
 * Limits hold for what is stored, which is normalized: case folding and NFKC can lengthen a
 * value that passed on input ("İ" lowercases to two characters, U+FDFA expands to 18), and
 * every device's sync check judges the stored value.
 */
function checkStoredLengths(v: { category?: string; tags?: string[]; entities: AuthoredEntity[]; relationships: AuthoredRelationship[] }, issues: Issue[]): void {
  const over = (value: string, path: string, max: number) => {
    if (value.length > max) issues.push({ path, message: `is ${value.length} characters once normalized (case folding, NFKC); the limit is ${max}` })
  }
  if (v.category !== undefined) over(v.category, 'category', LIMITS.categoryChars)
  v.tags?.forEach((t, i) => over(t, `tags[${i}]`, LIMITS.tagChars))
  v.entities.forEach((e, i) => over(e.type, `entities[${i}].type`, LIMITS.typeChars))
  v.relationships.forEach((r, i) => over(r.type, `relationships[${i}].type`, LIMITS.typeChars))
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
  fields: Partial<Omit<ValidObservation, 'entities' | 'relationships' | 'warnings'>>
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
  if (own(p, 'title') !== undefined) fields.title = text(own(p, 'title'), 'title', issues, { required: true, max: LIMITS.titleChars })
  if (own(p, 'content') !== undefined) {
    const c = contentOf(own(p, 'content'), issues)
    fields.content = c.content
    warnings = c.warnings
  }
  if (own(p, 'category') !== undefined) fields.category = text(own(p, 'category'), 'category', issues, { required: false, max: LIMITS.categoryChars }).toLowerCase() || 'note'
  if (own(p, 'tags') !== undefined) fields.tags = [...new Set(stringList(own(p, 'tags'), 'tags', issues, LIMITS.tags, LIMITS.tagChars).map((t) => t.toLowerCase()))]
  if (own(p, 'observedAt') !== undefined) {
    const d = parseDate(own(p, 'observedAt'), 'observedAt', issues)
    if (d) fields.observedAt = d
  }
  if (own(p, 'confidence') !== undefined) {
    const c = confidence(own(p, 'confidence'), issues)
    if (c !== undefined) fields.confidence = c
  }
  if (own(p, 'source') !== undefined) fields.source = text(own(p, 'source'), 'source', issues, { required: false, max: LIMITS.sourceChars })
  if (own(p, 'files') !== undefined) fields.files = [...new Set((stringListRaw(own(p, 'files'), 'files', issues) ?? []).map((f, i) => filePath(f, `files[${i}]`, issues)))]
  const entities = entityList(own(p, 'entities'), issues)
  const relationships = relationshipList(own(p, 'relationships'), issues)
  const removeEntities = stringList(own(p, 'removeEntities'), 'removeEntities', issues, LIMITS.entities, LIMITS.nameChars).map(normalizeName)
  const removeRelationships: string[] = []
  const rr = own(p, 'removeRelationships')
  if (rr !== undefined && rr !== null) {
    if (!Array.isArray(rr)) issues.push({ path: 'removeRelationships', message: 'must be an array of { source, type, target }' })
    else
      rr.forEach((raw, i) => {
        const at = `removeRelationships[${i}]`
        if (!isPlainObject(raw)) return void issues.push({ path: at, message: 'must be an object { source, type, target }' })
        const s = text(own(raw, 'source'), `${at}.source`, issues, { required: true, max: LIMITS.nameChars })
        const t = text(own(raw, 'type'), `${at}.type`, issues, { required: true, max: LIMITS.typeChars })
        const g = text(own(raw, 'target'), `${at}.target`, issues, { required: true, max: LIMITS.nameChars })
        removeRelationships.push(relationshipKey(normalizeName(s), normalizeType(t), normalizeName(g)))
      })
  }
  checkStoredLengths({ category: fields.category, tags: fields.tags, entities, relationships }, issues)
  if (issues.length) fail(issues, 'update')
  return { fields, entities, relationships, removeEntities, removeRelationships, warnings }
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
