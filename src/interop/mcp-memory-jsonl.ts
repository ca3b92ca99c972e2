// Reads the knowledge-graph file of the official MCP memory server (JSON lines of entities with
// observation strings, and relations) as Cairn observations: one observation per entity holding
// its strings, the entity described by them, its outgoing relations stated there. What has no
// place in Cairn's contract is left out and reported, never invented.
import { checkEndpoints, validateObservationInput } from '../core/contract'
import { LIMITS } from '../core/limits'
import { isMemoryError } from '../core/errors'
import { normalizeName } from '../core/normalize'
import { makeSlug } from '../core/slug'
import type { Observation, ObservationInput } from '../core/types'

export interface McpMemoryReport {
  lines: number
  entities: { read: number; imported: number; mergedByName: string[]; withoutObservations: string[] }
  /** `cut`: strings longer than an observation may be (20,000 characters), kept up to that length. */
  observationStrings: { read: number; imported: number; cut: number }
  relations: { read: number; imported: number; skipped: Array<{ from: string; relationType: string; to: string; reason: string }> }
  notes: number
  invalidLines: Array<{ line: number; reason: string }>
}

interface McpEntity {
  name: string
  type: string
  strings: string[]
  relations: Array<{ to: string; relationType: string }>
}

export interface ConvertOptions {
  now: string
  createdBy: string
  random: () => string
  /** Entity keys the target memory already has (relations may end there). */
  exists: (key: string) => boolean
  /** Slugs the target memory already uses. */
  taken: (slug: string) => boolean
  source: string
}

const isStr = (v: unknown): v is string => typeof v === 'string'

export function convertMcpMemory(text: string, opts: ConvertOptions): { observations: Observation[]; report: McpMemoryReport } {
  const report: McpMemoryReport = {
    lines: 0,
    entities: { read: 0, imported: 0, mergedByName: [], withoutObservations: [] },
    observationStrings: { read: 0, imported: 0, cut: 0 },
    relations: { read: 0, imported: 0, skipped: [] },
    notes: 0,
    invalidLines: [],
  }
  const entities = new Map<string, McpEntity>()
  const relations: Array<{ from: string; to: string; relationType: string }> = []
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return
    report.lines++
    let item: Record<string, unknown>
    try {
      item = JSON.parse(raw) as Record<string, unknown>
    } catch {
      return void report.invalidLines.push({ line: i + 1, reason: 'not JSON' })
    }
    if (item?.type === 'entity') {
      if (!isStr(item.name) || !item.name.trim()) return void report.invalidLines.push({ line: i + 1, reason: 'entity without a name' })
      report.entities.read++
      const strings = Array.isArray(item.observations) ? item.observations.filter(isStr).map((s) => s.trim()).filter(Boolean) : []
      report.observationStrings.read += strings.length
      const key = normalizeName(item.name)
      const known = entities.get(key)
      // the MCP server keeps names exact; Cairn folds case and spacing, so these become one entity
      if (known) {
        report.entities.mergedByName.push(item.name)
        known.strings.push(...strings)
      } else entities.set(key, { name: item.name.trim(), type: isStr(item.entityType) && item.entityType.trim() ? item.entityType.trim() : 'thing', strings, relations: [] })
    } else if (item?.type === 'relation') {
      if (!isStr(item.from) || !isStr(item.to) || !isStr(item.relationType) || !item.relationType.trim()) return void report.invalidLines.push({ line: i + 1, reason: 'relation needs from, to and relationType' })
      report.relations.read++
      relations.push({ from: item.from, to: item.to, relationType: item.relationType.trim() })
    } else report.invalidLines.push({ line: i + 1, reason: `unknown type ${JSON.stringify(item?.type ?? null)}` })
  })

  const described = new Set<string>()
  for (const [key, e] of entities) {
    if (e.strings.length) described.add(key)
    else report.entities.withoutObservations.push(e.name)
  }
  const seen = new Set<string>()
  for (const r of relations) {
    const from = normalizeName(r.from)
    const to = normalizeName(r.to)
    const skip = (reason: string): void => void report.relations.skipped.push({ ...r, reason })
    if (!described.has(from)) skip(entities.has(from) ? `"${r.from}" has no observations to describe it` : `"${r.from}" is not an entity of the file`)
    else if (!described.has(to) && !opts.exists(to)) skip(entities.has(to) ? `"${r.to}" has no observations to describe it` : `"${r.to}" is not an entity of the file`)
    else if (from === to) skip('connects an entity to itself')
    else if (seen.has(`${from}\u0000${normalizeName(r.relationType)}\u0000${to}`)) skip('repeats a relation already imported')
    else {
      seen.add(`${from}\u0000${normalizeName(r.relationType)}\u0000${to}`)
      entities.get(from)!.relations.push({ to: r.to, relationType: r.relationType })
    }
  }

  const observations: Observation[] = []
  const slugs = new Set<string>()
  const build = (input: ObservationInput, title: string): { ok: true; observation: Observation } | { ok: false; error: string } => {
    try {
      const { warnings: _w, ...fields } = validateObservationInput(input)
      checkEndpoints(fields.entities, fields.relationships, (k) => k, (k) => described.has(k) || opts.exists(k), 'write')
      const slug = makeSlug(title, (s) => slugs.has(s) || opts.taken(s), opts.random)
      slugs.add(slug)
      return { ok: true, observation: { slug, ...fields, observedAt: opts.now, createdBy: opts.createdBy, createdAt: opts.now, updatedAt: opts.now } }
    } catch (err) {
      if (!isMemoryError(err)) throw err
      return { ok: false, error: err.message }
    }
  }
  for (const key of described) {
    const e = entities.get(key)!
    const chunks = chunk(e.strings, LIMITS.contentSoftChars, LIMITS.contentHardChars - 2, () => report.observationStrings.cut++)
    const description = clip(e.strings.join('; '), LIMITS.descriptionChars)
    chunks.forEach((lines, part) => {
      const title = clip(chunks.length > 1 ? `${e.name} (${part + 1} of ${chunks.length})` : e.name, LIMITS.titleChars)
      const relationships = part === 0 ? e.relations.slice(0, LIMITS.relationships).map((r) => ({ source: e.name, type: r.relationType, target: r.to })) : []
      const input: ObservationInput = {
        title,
        content: lines.map((l) => `- ${l}`).join('\n'),
        category: 'imported',
        tags: ['mcp-memory'],
        source: opts.source,
        entities: [{ name: e.name, type: e.type, description }],
        // relations are stated once, with the entity's first note
        relationships,
      }
      let made = build(input, title)
      if (!made.ok && relationships.length) {
        // a relation Cairn refuses (say, an over-long type) must not cost the entity its note
        const refused = made.error
        made = build({ ...input, relationships: [] }, title)
        if (made.ok) for (const r of relationships) report.relations.skipped.push({ from: e.name, relationType: r.type, to: r.target, reason: `refused with the entity's note: ${refused}` })
      }
      if (!made.ok) return void report.invalidLines.push({ line: 0, reason: `entity "${e.name}": ${made.error}` })
      observations.push(made.observation)
      report.notes++
      report.observationStrings.imported += lines.length
      if (part === 0) {
        report.entities.imported++
        report.relations.imported += made.observation.relationships.length
      }
    })
    const over = e.relations.length - LIMITS.relationships
    if (over > 0) for (const r of e.relations.slice(LIMITS.relationships)) report.relations.skipped.push({ from: e.name, to: r.to, relationType: r.relationType, reason: `over ${LIMITS.relationships} relations from one entity` })
  }
  return { observations, report }
}

/** Groups lines into notes of about `max` characters; a longer line is a note alone, cut only past `hard`. */
function chunk(lines: string[], max: number, hard: number, onCut: () => void): string[][] {
  const out: string[][] = []
  let current: string[] = []
  let size = 0
  for (const raw of lines) {
    if (raw.length > hard) onCut()
    const line = clip(raw, hard)
    if (current.length && size + line.length + 3 > max) {
      out.push(current)
      current = []
      size = 0
    }
    current.push(line)
    size += line.length + 3
  }
  if (current.length) out.push(current)
  return out
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const cut = text.slice(0, max - 1)
  const space = cut.lastIndexOf(' ')
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`
}
