// Whole-memory backups: one versioned JSON object that a new memory can be rebuilt from,
// on this device or another. Connection tokens never leave the memory they belong to.
import { validateObservationInput } from '../core/contract'
import { parseSingleValued } from '../core/supersede'
import { isMemoryError, MemoryError } from '../core/errors'
import { isSlug, labelProblem, slugProblem, visibilityProblem } from '../core/identifiers'
import type { Alias, AppendixFile, Observation, RetrievalConfig, Visibility } from '../core/types'
import { BM25_ONLY, Memory, type CreateMemoryOptions } from './memory-handle'
import { validateFileInput } from './files'
import { MemoryDB, RegistryDB } from '../store/db'
import { sha256Hex } from './tokens'
import { ownerOf } from './owner-door'

export const BACKUP_FORMAT = 'cairn-memory@1'

export interface MemoryBackup {
  format: typeof BACKUP_FORMAT
  exportedAt: string
  info: { name: string; visibility: Visibility; orgId: string | null; retrieval: RetrievalConfig }
  observations: Observation[]
  aliases: Alias[]
  /** Merges a person turned down, so consolidation does not propose them again. */
  rejectedProposals: Array<{ id: string; pair: [string, string] }>
  files: Array<AppendixFile & { data: string }>
  /** Relationship types declared single-valued (absent when none). */
  singleValued?: string[]
}

/** How the imported memory is named and stored; its retrieval config comes from the backup. */
export type ImportOptions = Omit<CreateMemoryOptions, 'name' | 'retrieval' | 'id' | 'visibility' | 'orgId'> & {
  name?: string
  visibility?: Visibility
  orgId?: string
}

export async function exportMemory(memory: Memory): Promise<MemoryBackup> {
  const owner = ownerOf(memory)
  const info = memory.info
  await owner.notesHeld()
  const graph = owner.committed
  const files = await Promise.all(owner.listFiles().map(async (f) => ({ ...f, data: toBase64((await owner.readFile(f.path)).data) })))
  return {
    format: BACKUP_FORMAT,
    exportedAt: new Date().toISOString(),
    info: { name: info.name, visibility: info.visibility, orgId: info.orgId, retrieval: structuredClone(info.retrieval) },
    observations: structuredClone([...graph.allObservations()]),
    aliases: await owner.storedAliases(),
    rejectedProposals: owner.listProposals().filter((p) => p.status === 'rejected').map((p) => ({ id: p.id, pair: [p.pair[0], p.pair[1]] })),
    files,
    ...(memory.singleValued().length ? { singleValued: memory.singleValued() } : {}),
  }
}

/**
 * Rebuilds a backup as a NEW memory (fresh id, no connections). Everything is checked before
 * anything is created, so a refused backup leaves no memory behind.
 */
export async function importMemory(backup: unknown, options: ImportOptions): Promise<Memory> {
  const b = await parseBackup(backup)
  const r = b.info.retrieval
  if (r.embedder !== BM25_ONLY) {
    const e = options.embedder
    if (!e || e.id !== r.embedder || e.checksum !== r.modelChecksum || e.dimensions !== r.dimensions) {
      throw new MemoryError(
        'config_locked',
        `this backup was made with embedder ${r.embedder} (${r.dimensions} dimensions); import it with that embedder, or import and then migrate`,
        { retrieval: r, offered: e ? { embedder: e.id, modelChecksum: e.checksum, dimensions: e.dimensions } : null },
      )
    }
  }
  const visibility = options.visibility ?? b.info.visibility
  const orgId = options.orgId ?? b.info.orgId ?? undefined
  const { name: _n, visibility: _v, orgId: _o, embedder, ...deps } = options
  const memory = await Memory.create({
    ...deps,
    name: options.name ?? b.info.name,
    visibility,
    ...(orgId ? { orgId } : {}),
    retrieval: { embedder: r.embedder, weights: r.weights, snippetLength: r.snippetLength },
    ...(r.embedder !== BM25_ONLY && embedder ? { embedder } : {}),
  })
  const owner = ownerOf(memory)
  try {
    const now = new Date().toISOString()
    await owner.importSnapshot({ observations: b.observations, aliases: b.aliases, rejected: b.rejectedProposals.map((p) => ({ id: p.id, pair: p.pair, at: now })) })
    if (b.singleValued.length) await memory.setSingleValued(b.singleValued)
    for (const f of b.files) {
      await owner.storeFileAs({ path: f.path, filename: f.filename, type: f.type, description: f.description, data: f.bytes }, f.createdBy)
    }
  } catch (err) {
    // a storage failure part-way must not leave half a memory listed beside the others
    await discard(memory, deps)
    throw err
  }
  return memory
}

async function discard(memory: Memory, deps: ImportOptions): Promise<void> {
  const id = memory.info.id
  await memory.close().catch(() => undefined)
  await new MemoryDB(id, deps).delete().catch(() => undefined)
  const registry = new RegistryDB(deps)
  await registry.memories.delete(id).catch(() => undefined)
  registry.close()
}

export interface ParsedBackup {
  info: MemoryBackup['info']
  observations: Observation[]
  aliases: Alias[]
  rejectedProposals: MemoryBackup['rejectedProposals']
  files: Array<AppendixFile & { bytes: Uint8Array }>
  singleValued: string[]
}

function refuse(problem: string, details: Record<string, unknown> = {}): never {
  throw new MemoryError('invalid_request', `this is not a usable Cairn backup: ${problem}`, details)
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStr = (v: unknown): v is string => typeof v === 'string'

/** Checks a backup in full (every observation against the write contract, every file against its hash) before anything is written. */
export async function parseBackup(raw: unknown): Promise<ParsedBackup> {
  if (!isObj(raw)) refuse('expected a JSON object')
  if (raw.format !== BACKUP_FORMAT) refuse(`format is ${JSON.stringify(raw.format ?? null)}, expected "${BACKUP_FORMAT}"`, { format: raw.format ?? null })
  const info = raw.info
  if (!isObj(info)) refuse('info is missing')
  const nameProblem = labelProblem(info.name)
  if (nameProblem !== null) refuse(`info.name ${nameProblem}`)
  const visibility = visibilityProblem(info.visibility, info.orgId)
  if (visibility !== null) refuse(`info: ${visibility}`)
  const r = info.retrieval
  if (!isObj(r) || !isStr(r.embedder) || !isStr(r.modelChecksum) || typeof r.dimensions !== 'number' || typeof r.snippetLength !== 'number' || !isObj(r.weights) || typeof r.weights.vector !== 'number' || typeof r.weights.text !== 'number') {
    refuse('info.retrieval needs embedder, modelChecksum, dimensions, weights and snippetLength')
  }
  const retrieval: RetrievalConfig = {
    embedder: r.embedder, modelChecksum: r.modelChecksum, dimensions: r.dimensions, snippetLength: r.snippetLength,
    weights: { text: r.weights.text as number, vector: r.weights.vector as number },
  }
  for (const k of ['observations', 'aliases', 'rejectedProposals', 'files'] as const) if (!Array.isArray(raw[k])) refuse(`${k} must be an array`)
  const slugs = new Set<string>()
  const observations = (raw.observations as unknown[]).map((o, i) => {
    const at = `observations[${i}]`
    if (!isObj(o)) refuse(`${at} must be an object`)
    if (!isSlug(o.slug)) refuse(`${at}.slug ${slugProblem(o.slug)}`, { observation: String(o.slug).slice(0, 200) })
    if (slugs.has(o.slug)) refuse(`${at}.slug "${o.slug}" appears twice`)
    slugs.add(o.slug)
    for (const k of ['createdBy', 'createdAt', 'updatedAt', 'observedAt'] as const) if (!isStr(o[k])) refuse(`${at}.${k} must be a string`)
    try {
      const { slug: _s, createdBy: _b, createdAt: _c, updatedAt: _u, ...authored } = o
      validateObservationInput(authored)
    } catch (err) {
      if (isMemoryError(err)) refuse(`${at} (${o.slug as string}) ${err.message}`, { observation: o.slug, ...err.details })
      throw err
    }
    return structuredClone(o) as unknown as Observation
  })
  const aliases = (raw.aliases as unknown[]).map((a, i) => {
    if (!isObj(a) || !isStr(a.variant) || !isStr(a.canonical) || !a.variant || !a.canonical) refuse(`aliases[${i}] needs variant and canonical`)
    return { variant: a.variant, canonical: a.canonical, createdAt: isStr(a.createdAt) ? a.createdAt : new Date().toISOString() }
  })
  const rejectedProposals = (raw.rejectedProposals as unknown[]).map((p, i) => {
    if (!isObj(p) || !isStr(p.id) || !Array.isArray(p.pair) || p.pair.length !== 2 || !p.pair.every(isStr)) refuse(`rejectedProposals[${i}] needs id and a pair of two keys`)
    return { id: p.id, pair: [p.pair[0], p.pair[1]] as [string, string] }
  })
  const paths = new Set<string>()
  const files: ParsedBackup['files'] = []
  for (const [i, f] of (raw.files as unknown[]).entries()) {
    const at = `files[${i}]`
    if (!isObj(f) || !isStr(f.path) || !f.path) refuse(`${at}.path is missing`)
    if (paths.has(f.path)) refuse(`${at}.path "${f.path}" appears twice`)
    paths.add(f.path)
    if (!isStr(f.data)) refuse(`${at}.data must be base64 text`)
    const bytes = fromBase64(f.data)
    if (!bytes) refuse(`${at}.data is not valid base64`)
    if (isStr(f.sha256) && f.sha256 && (await sha256Hex(bytes)) !== f.sha256) refuse(`${at} (${f.path}) does not match its sha256; the backup is damaged`)
    const str = (k: string, fallback: string): string => (isStr(f[k]) ? (f[k] as string) : fallback)
    // the same checks storeFile makes, run now so a bad file is refused before anything exists
    const valid = await validateFileInput({ path: f.path, filename: str('filename', ''), type: str('type', ''), description: str('description', ''), data: bytes }).catch((err: unknown) => {
      if (isMemoryError(err)) refuse(`${at} (${f.path}): ${err.message}`, { path: f.path, ...err.details })
      throw err
    })
    files.push({
      path: valid.path, filename: valid.filename, type: valid.type, description: valid.description,
      createdBy: str('createdBy', 'import'), createdAt: str('createdAt', ''), size: bytes.byteLength, sha256: str('sha256', ''), bytes,
    })
  }
  let singleValued: string[] = []
  if (raw.singleValued !== undefined) {
    try {
      singleValued = parseSingleValued(raw.singleValued)
    } catch (err) {
      if (isMemoryError(err)) refuse(`singleValued: ${err.message}`, err.details)
      throw err
    }
  }
  return { info: { name: info.name as string, visibility: info.visibility as Visibility, orgId: info.visibility === 'organization' ? (info.orgId as string) : null, retrieval }, observations, aliases, rejectedProposals, files, singleValued }
}

function toBase64(bytes: Uint8Array): string {
  let bin = ''
  // chunks keep String.fromCharCode under the argument-count limit
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(bin)
}

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined
  const bin = atob(text)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}
