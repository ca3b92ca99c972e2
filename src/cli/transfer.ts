// `cairn import` and `cairn export`: moving a memory folder's contents in and out.
import { readFileSync, writeFileSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { MemoryError } from '../core/errors'
import { importMemory } from '../engine/backup'
import { detectFormat, importMcpMemory, mergeBackup, type ImportFormat } from '../interop/import'
import { exportGraphJson } from '../interop/json-export'
import { describeBackupMerge, describeMcpImport } from '../interop/report-text'
import { writeMarkdownVault } from '../interop/vault-folder'
import { defaultDataDir } from '../mcp/command'
import { openNodeMemory } from '../node-store/node-memory'
import { createDefaultEmbedder } from '../search/default-embedder'
import { ownerOf } from '../engine/owner-door'

export const IMPORT_USAGE = `usage: cairn import FILE [--dir PATH] [--format mcp-memory|backup] [--name NAME] [--bm25] [--report FILE]

Reads FILE into the memory kept in --dir (default $CAIRN_DIR or ~/.cairn/memory; stop a
\`cairn mcp\` using that folder first):
  - the official MCP memory server's memory.jsonl: each entity becomes an observation holding its
    observation strings, described by them, with its outgoing relations; entities with no
    observations (nothing to describe them) and relations that cannot be placed are reported
  - a Cairn backup (JSON from the app or \`cairn export --json\`): into an empty folder as the
    memory it was (name, retrieval config, merges, files); into an existing memory, what it lacks
The format is detected unless --format is given. --report writes the full report as JSON.`

export const EXPORT_USAGE = `usage: cairn export [--dir PATH] (--markdown DIR | --json FILE)

  --markdown DIR   an Obsidian-compatible vault: notes/ (one note per observation, fields as
                   front matter), entities/ (a page per entity: description, [[links]] to its
                   relationships and notes), files/ (the appendix), index.md
  --json FILE      the whole memory: a Cairn backup (importable) plus the derived graph`

export async function runImport(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { dir: { type: 'string' }, format: { type: 'string' }, name: { type: 'string' }, bm25: { type: 'boolean' }, report: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) return void process.stdout.write(`${IMPORT_USAGE}\n`)
  const file = positionals[0]
  if (!file || positionals.length > 1) throw new MemoryError('invalid_request', 'cairn import takes one FILE; see cairn import --help')
  if (values.format !== undefined && values.format !== 'mcp-memory' && values.format !== 'backup') throw new MemoryError('invalid_request', '--format is mcp-memory or backup')
  let text: string
  try {
    text = readFileSync(resolve(file), 'utf8')
  } catch (e) {
    throw new MemoryError('not_found', `cannot read ${file}: ${(e as Error).message}`, { file })
  }
  const format: ImportFormat = values.format === 'backup' ? 'cairn-backup' : values.format === 'mcp-memory' ? 'mcp-memory' : detectFormat(text)
  const dir = resolve(values.dir ?? defaultDataDir())
  const embedder = values.bm25 ? undefined : await createDefaultEmbedder()
  let backup: unknown
  if (format === 'cairn-backup') {
    try {
      backup = JSON.parse(text)
    } catch (e) {
      throw new MemoryError('invalid_request', `${file} is not JSON: ${(e as Error).message}`, { file })
    }
  }
  let created = false
  const opened = await openNodeMemory(dir, {
    ...(values.name ? { name: values.name } : {}),
    ...(embedder ? { embedder } : {}),
    // an empty folder becomes the backed-up memory itself, with its own config
    ...(format === 'cairn-backup'
      ? { create: async (deps) => ((created = true), importMemory(backup, { ...deps, ...(embedder ? { embedder } : {}), ...(values.name ? { name: values.name } : {}) })) }
      : {}),
  })
  try {
    let report: unknown
    if (format === 'mcp-memory') {
      const r = await importMcpMemory(opened.memory, text, { source: `mcp-memory:${basename(file)}` })
      report = { format, dir, memory: opened.memory.info.id, ...r }
      process.stdout.write(
        [
          `imported ${file} (MCP memory server JSONL) into ${dir}`,
          ...describeMcpImport(r, '--report FILE lists all').map((line) => `  ${line}`),
        ].join('\n') + '\n',
      )
    } else if (created) {
      const info = opened.memory.info
      report = { format, dir, memory: info.id, created: true, observations: ownerOf(opened.memory).committed.observationCount }
      process.stdout.write(`imported ${file} (Cairn backup) into ${dir} as memory "${info.name}" (${info.id})\n`)
    } else {
      const r = await mergeBackup(opened.memory, backup)
      report = { format, dir, memory: opened.memory.info.id, ...r }
      process.stdout.write(
        `merged ${file} (Cairn backup) into ${dir}: ${describeBackupMerge(r)}\n`,
      )
    }
    if (values.report) writeFileSync(resolve(values.report), `${JSON.stringify(report, null, 2)}\n`)
  } finally {
    await opened.close()
    await embedder?.dispose?.()
  }
}

export async function runExport(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dir: { type: 'string' }, markdown: { type: 'string' }, json: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
  if (values.help) return void process.stdout.write(`${EXPORT_USAGE}\n`)
  if (!values.markdown && !values.json) throw new MemoryError('invalid_request', 'cairn export needs --markdown DIR or --json FILE; see cairn export --help')
  const dir = resolve(values.dir ?? defaultDataDir())
  const embedder = await createDefaultEmbedder()
  const opened = await openNodeMemory(dir, { embedder, mustExist: true })
  try {
    if (values.json) {
      writeFileSync(resolve(values.json), JSON.stringify(await exportGraphJson(opened.memory)))
      process.stdout.write(`wrote ${values.json}\n`)
    }
    if (values.markdown) {
      const r = await writeMarkdownVault(opened.memory, resolve(values.markdown))
      process.stdout.write(`wrote ${values.markdown}: ${r.notes} notes, ${r.entities} entity pages, ${r.files} files\n`)
    }
  } finally {
    await opened.close()
    await embedder.dispose?.()
  }
}
