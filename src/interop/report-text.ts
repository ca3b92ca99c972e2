// What an import brought in and what it left out, in the words both the CLI and the app show.
import { LIMITS } from '../core/limits'
import type { McpMemoryReport } from './mcp-memory-jsonl'

/** Up to five items, then how many more; `more` says where the full list is. */
function sample(items: string[], more: string): string {
  return items.slice(0, 5).join('; ') + (items.length > 5 ? `; and ${items.length - 5} more${more ? ` (${more})` : ''}` : '')
}

/** What merging a backup into a memory brought in. */
export interface BackupMergeReport {
  observations: { read: number; imported: number; alreadyPresent: number }
  aliases: { read: number; imported: number }
  files: { read: number; imported: number; alreadyPresent: string[] }
  rejectedProposals: number
}

/** One line per kind of thing read: what was imported, then what was not and why. */
export function describeMcpImport(r: McpMemoryReport, more = ''): string[] {
  return [
    `entities: ${r.entities.imported} of ${r.entities.read}${r.entities.mergedByName.length ? `; ${r.entities.mergedByName.length} repeated names merged` : ''}`,
    `observation strings: ${r.observationStrings.imported} of ${r.observationStrings.read}, as ${r.notes} notes${r.observationStrings.cut ? `; ${r.observationStrings.cut} cut at ${LIMITS.contentHardChars.toLocaleString('en-US')} characters` : ''}`,
    `relations: ${r.relations.imported} of ${r.relations.read}`,
    ...(r.entities.withoutObservations.length
      ? [`not imported: ${r.entities.withoutObservations.length} entities without observations (Cairn needs text to describe an entity): ${sample(r.entities.withoutObservations, more)}`]
      : []),
    ...(r.relations.skipped.length ? [`not imported: ${r.relations.skipped.length} relations: ${sample(r.relations.skipped.map((s) => `${s.from} ${s.relationType} ${s.to} (${s.reason})`), more)}`] : []),
    ...(r.invalidLines.length ? [`unreadable: ${r.invalidLines.length} lines: ${sample(r.invalidLines.map((l) => `line ${l.line}: ${l.reason}`), more)}`] : []),
  ]
}

export function describeBackupMerge(r: BackupMergeReport): string {
  return `${r.observations.imported} observations (${r.observations.alreadyPresent} already present), ${r.aliases.imported} merges, ${r.files.imported} files${r.files.alreadyPresent.length ? ` (${r.files.alreadyPresent.length} paths already taken, kept as they were)` : ''}, ${r.rejectedProposals} rejected merges`
}
