// A memory as an Obsidian-compatible vault: a note per observation with its fields as front
// matter, a page per entity with its description and [[links]] to its neighbors and notes, and
// the appendix files as they were stored. Built as a list of files, so the CLI writes them to a
// folder and the app zips them for a download.
import { isSlug } from '../core/identifiers'
import { normalizeName } from '../core/normalize'
import { slugBase } from '../core/slug'
import type { Observation } from '../core/types'
import type { Memory } from '../engine/memory-handle'
import { ownerOf } from '../engine/owner-door'

export interface VaultReport {
  notes: number
  entities: number
  files: number
}

/** One file of the vault: its path inside the vault (forward slashes) and its contents. */
export interface VaultFile {
  path: string
  data: string | Uint8Array
}

const UNSAFE = /[\\/:*?"<>|#^[\]\u0000-\u001f]/g

/** YAML front matter: JSON strings and arrays are YAML flow scalars, so every value is written as JSON. */
function frontMatter(fields: Record<string, unknown>): string {
  const lines = Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
  return `---\n${lines.join('\n')}\n---\n`
}

/** When something held, in words: ' (valid 2020-01-01 to 2023-06-01)', '' when open at both ends. */
function during(from: string | undefined, to: string | undefined): string {
  if (!from && !to) return ''
  return ` (valid ${from ? `from ${from.slice(0, 10)}` : ''}${from && to ? ' ' : ''}${to ? `until ${to.slice(0, 10)}` : ''})`
}

/** Link text may not hold the characters that end or split a wikilink. */
const label = (text: string): string => text.replace(/[|[\]]/g, ' ').replace(/\s+/g, ' ').trim()

export async function buildMarkdownVault(memory: Memory, now: Date = new Date()): Promise<{ files: VaultFile[]; report: VaultReport }> {
  const owner = ownerOf(memory)
  const out: VaultFile[] = []
  await owner.notesHeld()
  const graph = owner.committed
  const entities = [...graph.entities.values()].sort((a, b) => a.name.localeCompare(b.name))
  // one file per entity; names that differ only where a file system cannot tell get a number
  const fileOf = new Map<string, string>()
  const used = new Set<string>()
  for (const e of entities) {
    const base = e.name.replace(UNSAFE, '-').replace(/^\.+/, '_').trim().slice(0, 120) || 'entity'
    let name = base
    for (let n = 2; used.has(name.toLowerCase()); n++) name = `${base} (${n})`
    used.add(name.toLowerCase())
    fileOf.set(e.key, name)
  }
  const entityLink = (nameOrKey: string): string => {
    // authored names resolve through their normalized key and any merge since
    const e = graph.entities.get(graph.resolve(normalizeName(nameOrKey)))
    return e ? `[[entities/${fileOf.get(e.key)}|${label(e.name)}]]` : label(nameOrKey)
  }
  const observations = [...graph.allObservations()].sort((a, b) => a.slug.localeCompare(b.slug))
  // A note's file is its slug. Every reader refuses a slug outside the slug rule, but a note
  // stored before that rule still gets a file inside notes/: one made from it by slugBase.
  const noteFile = new Map<string, string>()
  const takenFiles = new Set(observations.filter((o) => isSlug(o.slug)).map((o) => o.slug))
  for (const o of observations) {
    if (isSlug(o.slug)) {
      noteFile.set(o.slug, o.slug)
      continue
    }
    const base = slugBase(o.slug)
    let name = base
    for (let n = 2; takenFiles.has(name); n++) name = `${base}-${n}`
    takenFiles.add(name)
    noteFile.set(o.slug, name)
  }
  const noteLink = (o: Pick<Observation, 'slug' | 'title'>): string => `[[notes/${noteFile.get(o.slug) ?? slugBase(o.slug)}|${label(o.title)}]]`

  for (const o of observations) {
    const body = [
      frontMatter({
        slug: o.slug, title: o.title, category: o.category, tags: o.tags, observed: o.observedAt, confidence: o.confidence, source: o.source,
        created: o.createdAt, updated: o.updatedAt, created_by: o.createdBy, entities: o.entities.map((e) => e.name), files: o.files,
        valid_from: o.validFrom, valid_to: o.validTo, supersedes: o.supersedes,
      }),
      `# ${o.title}\n\n${o.content}\n`,
      o.supersedes?.length ? `\n## Replaces\n\n${o.supersedes.map((s) => { const old = graph.getObservation(s); return `- ${old ? noteLink(old) : s}` }).join('\n')}\n` : '',
      o.entities.length ? `\n## Entities\n\n${o.entities.map((e) => `- ${entityLink(e.name)}${e.type ? ` (${e.type})` : ''}${e.description ? `: ${e.description}` : ''}`).join('\n')}\n` : '',
      o.relationships.length ? `\n## Relationships\n\n${o.relationships.map((r) => `- ${entityLink(r.source)} → ${r.type} → ${entityLink(r.target)}${during(r.validFrom, r.validTo)}${r.description ? `: ${r.description}` : ''}`).join('\n')}\n` : '',
      o.files.length ? `\n## Files\n\n${o.files.map((f) => `- [[files/${f}]]`).join('\n')}\n` : '',
    ].join('')
    out.push({ path: `notes/${noteFile.get(o.slug)!}.md`, data: body })
  }
  for (const e of entities) {
    const detail = owner.inspect(e.key)
    // each note's place in world time, for notes that have one
    const history = new Map(detail.history.map((h) => [h.slug, h]))
    const timeOf = (slug: string): string => {
      const h = history.get(slug)
      if (!h || (!h.validFrom && !h.validTo && !h.supersededBy)) return ''
      const by = h.supersededBy?.map((s) => { const n = graph.getObservation(s); return n ? noteLink(n) : s }).join(', ')
      return `${during(h.validFrom, h.validTo)}${by ? `, superseded by ${by}` : ''}`
    }
    const body = [
      frontMatter({ name: e.name, type: e.type, degree: e.degree, aliases: detail.aliases, queries: e.queries }),
      `# ${e.name}\n\n${e.description}\n`,
      detail.outgoing.length || detail.incoming.length
        ? `\n## Relationships\n\n${[
            ...detail.outgoing.map((r) => `- ${r.type} → ${entityLink(r.target)}${r.weight !== 1 ? ` (weight ${r.weight})` : ''}${r.description ? `: ${r.description}` : ''}`),
            ...detail.incoming.map((r) => `- ${entityLink(r.source)} → ${r.type} → this${r.description ? `: ${r.description}` : ''}`),
          ].join('\n')}\n`
        : '',
      `\n## Observations\n\n${detail.observations.map((o) => `- ${noteLink(o)} (${o.observedAt.slice(0, 10)})${timeOf(o.slug)}`).join('\n')}\n`,
    ].join('')
    out.push({ path: `entities/${fileOf.get(e.key)}.md`, data: body })
  }
  const files = owner.listFiles()
  for (const f of files) out.push({ path: `files/${f.path}`, data: (await owner.readFile(f.path)).data })
  const info = memory.info
  out.push({
    path: 'index.md',
    data: `${frontMatter({ memory: info.id, name: info.name, exported: now.toISOString() })}# ${info.name}\n\n${observations.length} notes in notes/, ${entities.length} entities in entities/, ${files.length} files in files/.\n\n## Entities by degree\n\n${[...entities]
      .sort((a, b) => b.degree - a.degree)
      .slice(0, 50)
      .map((e) => `- ${entityLink(e.key)} (${e.degree})`)
      .join('\n')}\n`,
  })
  return { files: out, report: { notes: observations.length, entities: entities.length, files: files.length } }
}
