// Checks values read from a memory document. A peer may run other code (or be hostile), so
// every value is treated as untrusted: exact shape, own fields only, bounded sizes. A check
// returns a fresh object built from the known fields, or the reason it was refused; it never throws.
import * as Y from 'yjs'
import { intervalProblem, isStoredDate, storedTextProblem, TEXT, type TextRule } from '../core/contract'
import { LIMITS, MAX_FILE_BYTES, MAX_KEY_CHARS } from '../core/limits'
import { isSlug, slugProblem } from '../core/identifiers'
import { normalizeName } from '../core/normalize'
import type { Alias, AppendixFile, AuthoredEntity, AuthoredRelationship, Observation, ValidityFields } from '../core/types'
import { SINGLE_VALUED_KEY, type RejectedPair, type SingleValuedSetting } from './layout'

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string }

const DATE_CHARS = 40
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

class Invalid extends Error {}

function fail(reason: string): never {
  throw new Invalid(reason)
}

function record(value: unknown, at: string, fields: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) fail(`${at} must be an object`)
  if (value instanceof Y.AbstractType) fail(`${at} must be a plain value, not a shared type`)
  // Only own fields count. A decoded `__proto__` key lands as the prototype rather than an own
  // field, and every re-encoding (merging the saved log, a state update for a new peer) drops
  // it, so it is ignored here too: a device must judge a value the same before and after.
  // The prototype is never read: fields are taken with hasOwnProperty into a fresh object.
  const keys = Object.keys(value)
  for (const key of keys) {
    if (FORBIDDEN_KEYS.has(key)) fail(`${at} has a forbidden field "${key}"`)
    // a newer version's field (validFrom once was one): say so, so a person knows to update
    if (!fields.includes(key)) fail(`${at} has an unknown field "${key.slice(0, 40)}": this version of Cairn does not know it (a newer version may have written it), so the entry is left out`)
  }
  return value as Record<string, unknown>
}

function field(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined
}

function str(value: unknown, at: string, max: number, opts: { nonEmpty?: boolean; trimmed?: boolean } = {}): string {
  if (typeof value !== 'string') fail(`${at} must be a string`)
  if (value.length > max) fail(`${at} is ${value.length} characters; the limit is ${max}`)
  if (opts.nonEmpty && value.trim().length === 0) fail(`${at} must not be empty`)
  // an author's write trims it: anything else came from no author
  if (opts.trimmed && value !== value.trim()) fail(`${at} has surrounding spaces, which no write leaves`)
  return value
}

/** A text field exactly as a write stores it (see `TEXT` in the write contract). */
function stored(value: unknown, at: string, rule: TextRule): string {
  if (typeof value !== 'string') fail(`${at} must be a string`)
  const problem = storedTextProblem(rule, value)
  if (problem !== null) fail(`${at} ${problem}`)
  return value
}

/** A list of distinct stored values, as a write leaves it. */
function storedList(value: unknown, at: string, max: number, rule: TextRule): string[] {
  const out = list(value, at, max, (v, a) => stored(v, a, rule))
  if (new Set(out).size !== out.length) fail(`${at} repeats a value, which no write leaves`)
  return out
}

/** An entity key: bounded, and naming something (a name of symbols alone has no key). */
function entityKey(value: unknown, at: string): string {
  const k = str(value, at, MAX_KEY_CHARS, { nonEmpty: true })
  if (normalizeName(k) === '') fail(`${at} "${k.slice(0, 80)}" has no letters or digits`)
  return k
}

function storedDate(value: unknown, at: string): string {
  const s = str(value, at, DATE_CHARS, { nonEmpty: true })
  if (!isStoredDate(s)) fail(`${at} is not an ISO 8601 date as a write stores it`)
  return s
}

function num(value: unknown, at: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) fail(`${at} must be a number from ${min} to ${max}`)
  return value
}

function list<T>(value: unknown, at: string, max: number, item: (v: unknown, at: string) => T): T[] {
  if (!Array.isArray(value)) fail(`${at} must be an array`)
  if (value.length > max) fail(`${at} has ${value.length} items; the limit is ${max}`)
  return value.map((v, i) => item(v, `${at}[${i}]`))
}

function date(value: unknown, at: string): string {
  const s = str(value, at, DATE_CHARS, { nonEmpty: true })
  if (!Number.isFinite(Date.parse(s))) fail(`${at} is not a date`)
  return s
}

function path(value: unknown, at: string): string {
  return stored(value, at, TEXT.path)
}

function checked<T>(build: () => T): Checked<T> {
  try {
    return { ok: true, value: build() }
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: err.message }
    return { ok: false, reason: 'unreadable value' }
  }
}

const ENTITY_FIELDS = ['name', 'type', 'description', 'queries'] as const
const RELATIONSHIP_FIELDS = ['source', 'type', 'target', 'description', 'weight', 'validFrom', 'validTo'] as const
const OBSERVATION_FIELDS = [
  'slug', 'title', 'content', 'category', 'tags', 'observedAt', 'confidence', 'source',
  'entities', 'relationships', 'files', 'createdBy', 'createdAt', 'updatedAt',
  'validFrom', 'validTo', 'supersedes',
] as const

/**
 * The optional validity fields as a write stores them: present only when given, dates as stored,
 * the interval's end after its start, and a note's `supersedes` a non-empty list of distinct slugs.
 */
function validity(o: Record<string, unknown>, at: string, withSupersedes: boolean): ValidityFields {
  const out: ValidityFields = {}
  const prefix = at ? `${at}.` : ''
  if (field(o, 'validFrom') !== undefined) out.validFrom = storedDate(field(o, 'validFrom'), `${prefix}validFrom`)
  if (field(o, 'validTo') !== undefined) out.validTo = storedDate(field(o, 'validTo'), `${prefix}validTo`)
  const problem = intervalProblem(out.validFrom, out.validTo)
  if (problem) fail(`${prefix}validTo ${problem}`)
  if (withSupersedes && field(o, 'supersedes') !== undefined) {
    const supersedes = storedList(field(o, 'supersedes'), `${prefix}supersedes`, LIMITS.supersedes, TEXT.slug)
    if (!supersedes.length) fail(`${prefix}supersedes is empty, which no write leaves`)
    if (!supersedes.every(isSlug)) fail(`${prefix}supersedes holds a value that is no slug`)
    out.supersedes = supersedes
  }
  return out
}

function entity(value: unknown, at: string): AuthoredEntity {
  const o = record(value, at, ENTITY_FIELDS)
  const description = stored(field(o, 'description'), `${at}.description`, TEXT.description)
  const type = stored(field(o, 'type'), `${at}.type`, TEXT.entityType)
  // a write gives a described entity a type (DEFAULT_ENTITY_TYPE when none was named)
  if (description && !type) fail(`${at}.type is empty for a described entity, which no write leaves`)
  return {
    name: stored(field(o, 'name'), `${at}.name`, TEXT.name),
    type,
    // empty when the note names an entity described elsewhere
    description,
    queries: storedList(field(o, 'queries'), `${at}.queries`, LIMITS.queries, TEXT.query),
  }
}

function relationship(value: unknown, at: string): AuthoredRelationship {
  const o = record(value, at, RELATIONSHIP_FIELDS)
  return {
    source: stored(field(o, 'source'), `${at}.source`, TEXT.name),
    type: stored(field(o, 'type'), `${at}.type`, TEXT.relationshipType),
    target: stored(field(o, 'target'), `${at}.target`, TEXT.name),
    description: stored(field(o, 'description'), `${at}.description`, TEXT.relationshipDescription),
    weight: num(field(o, 'weight'), `${at}.weight`, Number.MIN_VALUE, LIMITS.maxWeight),
    ...validity(o, at, false),
  }
}

/** `key` is the map key the value was stored under; it must match the value's own identity. */
export function checkObservation(key: string, value: unknown): Checked<Observation> {
  return checked(() => {
    const o = record(value, 'observation', OBSERVATION_FIELDS)
    const slug = field(o, 'slug')
    if (!isSlug(slug)) fail(`slug ${typeof slug === 'string' ? `"${slug.slice(0, 80)}" ` : ''}${slugProblem(slug)}`)
    if (slug !== key) fail(`slug "${slug.slice(0, 80)}" does not match its key "${key.slice(0, 80)}"`)
    const title = stored(field(o, 'title'), 'title', TEXT.title)
    const content = stored(field(o, 'content'), 'content', TEXT.content)
    const category = stored(field(o, 'category'), 'category', TEXT.category)
    // a write stores "note" when no category was given
    if (!category) fail('category is empty, which no write leaves')
    const tags = storedList(field(o, 'tags'), 'tags', LIMITS.tags, TEXT.tag)
    const observedAt = storedDate(field(o, 'observedAt'), 'observedAt')
    const confidence = num(field(o, 'confidence'), 'confidence', 0, 1)
    const source = stored(field(o, 'source'), 'source', TEXT.source)
    const entities = list(field(o, 'entities'), 'entities', LIMITS.entities, entity)
    if (new Set(entities.map((e) => normalizeName(e.name))).size !== entities.length) fail('entities names one entity twice, which no write leaves')
    return {
      slug,
      title,
      content,
      category,
      tags,
      observedAt,
      confidence,
      source,
      entities,
      relationships: list(field(o, 'relationships'), 'relationships', LIMITS.relationships, relationship),
      files: storedList(field(o, 'files'), 'files', LIMITS.files, TEXT.path),
      createdBy: str(field(o, 'createdBy'), 'createdBy', MAX_KEY_CHARS),
      createdAt: storedDate(field(o, 'createdAt'), 'createdAt'),
      updatedAt: storedDate(field(o, 'updatedAt'), 'updatedAt'),
      ...validity(o, '', true),
    }
  })
}

export function checkAlias(key: string, value: unknown): Checked<Alias> {
  return checked(() => {
    const o = record(value, 'alias', ['variant', 'canonical', 'createdAt'])
    const variant = entityKey(field(o, 'variant'), 'variant')
    if (variant !== key) fail(`variant "${variant.slice(0, 80)}" does not match its key`)
    const canonical = entityKey(field(o, 'canonical'), 'canonical')
    if (canonical === variant) fail('an alias maps an entity to itself')
    return { variant, canonical, createdAt: date(field(o, 'createdAt'), 'createdAt') }
  })
}

export function checkRejected(_key: string, value: unknown): Checked<RejectedPair> {
  return checked(() => {
    const o = record(value, 'rejected pair', ['pair', 'at'])
    const pair = list(field(o, 'pair'), 'pair', 2, entityKey)
    if (pair.length !== 2) fail('pair must hold two entity keys')
    return { pair: [pair[0]!, pair[1]!], at: date(field(o, 'at'), 'at') }
  })
}

const FILE_FIELDS = ['path', 'filename', 'type', 'size', 'description', 'createdBy', 'createdAt', 'sha256'] as const

export function checkFile(key: string, value: unknown): Checked<AppendixFile> {
  return checked(() => {
    const o = record(value, 'file', FILE_FIELDS)
    const p = path(field(o, 'path'), 'path')
    if (p !== key) fail(`path "${p.slice(0, 80)}" does not match its key`)
    const sha256 = str(field(o, 'sha256'), 'sha256', 64)
    if (!/^[0-9a-f]{64}$/.test(sha256)) fail('sha256 must be 64 lowercase hex digits')
    return {
      path: p,
      filename: stored(field(o, 'filename'), 'filename', TEXT.filename),
      type: stored(field(o, 'type'), 'type', TEXT.mediaType),
      size: num(field(o, 'size'), 'size', 0, MAX_FILE_BYTES),
      description: stored(field(o, 'description'), 'description', TEXT.description),
      createdBy: str(field(o, 'createdBy'), 'createdBy', MAX_KEY_CHARS),
      createdAt: date(field(o, 'createdAt'), 'createdAt'),
      sha256,
    }
  })
}

/** The settings map holds `singleValued`: distinct relationship types as a write stores them, and when they were declared. */
export function checkSetting(key: string, value: unknown): Checked<SingleValuedSetting> {
  return checked(() => {
    if (key !== SINGLE_VALUED_KEY) fail(`the settings map holds only "${SINGLE_VALUED_KEY}"`)
    const o = record(value, 'setting', ['types', 'at'])
    return { types: storedList(field(o, 'types'), 'types', LIMITS.singleValuedTypes, TEXT.relationshipType), at: storedDate(field(o, 'at'), 'at') }
  })
}

export function checkFileBytes(_key: string, value: unknown): Checked<Uint8Array> {
  if (!(value instanceof Uint8Array)) return { ok: false, reason: 'file bytes must be binary' }
  if (value.byteLength > MAX_FILE_BYTES) {
    return { ok: false, reason: `file is ${value.byteLength} bytes; the synced limit is ${MAX_FILE_BYTES}` }
  }
  return { ok: true, value }
}

export function checkKey(key: string): string | null {
  if (key.length === 0) return 'empty key'
  if (key.length > MAX_KEY_CHARS) return `key is ${key.length} characters; the limit is ${MAX_KEY_CHARS}`
  if (FORBIDDEN_KEYS.has(key)) return `forbidden key "${key}"`
  return null
}
