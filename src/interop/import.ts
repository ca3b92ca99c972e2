// Bringing other data into a memory: the official MCP memory server's JSONL file, and Cairn
// backups (into a new memory whole, or merged into one that exists). Each returns a report of
// what came in and what was left out.
import { MemoryError } from '../core/errors'
import { normalizeName } from '../core/normalize'
import { BACKUP_FORMAT, parseBackup } from '../engine/backup'
import type { Memory } from '../engine/memory-handle'
import { randomId, sha256Hex } from '../engine/tokens'
import { convertMcpMemory, type McpMemoryReport } from './mcp-memory-jsonl'
import { describeBackupMerge, describeMcpImport, type BackupMergeReport } from './report-text'
import { ownerOf } from '../engine/owner-door'

export type ImportFormat = 'mcp-memory' | 'cairn-backup'

/** A Cairn backup is one JSON object with its format; anything else is read as MCP memory JSON lines. */
export function detectFormat(text: string): ImportFormat {
  const head = text.trimStart()
  if (head.startsWith('{')) {
    try {
      const whole = JSON.parse(text) as { format?: unknown }
      if (whole?.format === BACKUP_FORMAT) return 'cairn-backup'
    } catch {
      // not one JSON document: JSON lines
    }
  }
  return 'mcp-memory'
}

/** Adds the entities and relations of an MCP memory server file as observations, in one transaction. */
export async function importMcpMemory(memory: Memory, text: string, opts: { source?: string; createdBy?: string } = {}): Promise<McpMemoryReport> {
  await ownerOf(memory).notesHeld()
  const graph = ownerOf(memory).committed
  const { observations, report } = convertMcpMemory(text, {
    now: new Date().toISOString(),
    createdBy: opts.createdBy ?? 'import',
    random: () => randomId(6),
    exists: (key) => graph.entities.has(graph.resolve(key)),
    taken: (slug) => graph.getObservation(slug) !== undefined,
    source: opts.source ?? 'mcp-memory',
  })
  if (report.lines > 0 && report.entities.read === 0 && report.relations.read === 0) {
    throw new MemoryError('invalid_request', 'this file holds no MCP memory entities or relations (expected JSON lines with "type": "entity" or "relation")', { invalidLines: report.invalidLines.slice(0, 5) })
  }
  if (observations.length) await ownerOf(memory).importObservations(observations, [])
  return report
}

/** Merges a backup into an existing memory: observations and files it lacks, aliases, rejected merges. */
export async function mergeBackup(memory: Memory, raw: unknown): Promise<BackupMergeReport> {
  const owner = ownerOf(memory)
  const b = await parseBackup(raw)
  await owner.notesHeld()
  const graph = owner.committed
  const fresh = b.observations.filter((o) => !graph.getObservation(o.slug))
  const known = new Set(owner.listFiles().map((f) => f.path))
  const files = await Promise.all(
    b.files.filter((f) => !known.has(f.path)).map(async ({ bytes, ...file }) => ({ file: { ...file, sha256: file.sha256 || (await sha256Hex(bytes)), createdAt: file.createdAt || new Date().toISOString() }, bytes })),
  )
  const aliases = new Map(graph.aliasMap())
  let newAliases = 0
  for (const a of b.aliases) {
    const variant = normalizeName(a.variant)
    if (aliases.has(variant)) continue
    aliases.set(variant, normalizeName(a.canonical))
    newAliases++
  }
  const now = new Date().toISOString()
  await owner.mergeChange({
    put: fresh,
    deleted: [],
    ...(newAliases ? { aliases } : {}),
    files,
    rejected: b.rejectedProposals.map((p) => ({ id: p.id, pair: p.pair, at: now })),
  })
  return {
    observations: { read: b.observations.length, imported: fresh.length, alreadyPresent: b.observations.length - fresh.length },
    aliases: { read: b.aliases.length, imported: newAliases },
    files: { read: b.files.length, imported: files.length, alreadyPresent: b.files.filter((f) => known.has(f.path)).map((f) => f.path) },
    rejectedProposals: b.rejectedProposals.length,
  }
}

/** What an import of a file into an existing memory did, with the lines that say so. */
export type ImportOutcome =
  | { format: 'mcp-memory'; report: McpMemoryReport; summary: string[] }
  | { format: 'cairn-backup'; report: BackupMergeReport; summary: string[] }

/**
 * Imports a file's text into an existing memory, reading it as its contents say: MCP memory
 * JSON lines are added as observations, a Cairn backup is merged (what the memory lacks).
 */
export async function importInto(memory: Memory, text: string, opts: { fileName?: string } = {}): Promise<ImportOutcome> {
  if (detectFormat(text) === 'cairn-backup') {
    const report = await mergeBackup(memory, JSON.parse(text))
    return { format: 'cairn-backup', report, summary: [`merged: ${describeBackupMerge(report)}`] }
  }
  const report = await importMcpMemory(memory, text, { source: opts.fileName ? `mcp-memory:${opts.fileName}` : 'mcp-memory' })
  return { format: 'mcp-memory', report, summary: describeMcpImport(report) }
}
