// Importing a file into an existing memory as the app does (the format read from the contents,
// the report in the CLI's words), and the vault built as files for a folder or a ZIP.
import { describe, expect, it } from 'vitest'
import { exportMemory } from '../../src/engine/backup'
import { importInto } from '../../src/interop/import'
import { buildMarkdownVault } from '../../src/interop/markdown-vault'
import { ada, engine as analyticalEngine, fixture } from '../engine/fixture'

const jsonl = [
  { type: 'entity', name: 'Grace Hopper', entityType: 'person', observations: ['Built the first compiler', 'Rear admiral in the US Navy'] },
  { type: 'entity', name: 'COBOL', entityType: 'language', observations: ['A business programming language'] },
  { type: 'entity', name: 'Harvard Mark I', entityType: 'machine', observations: [] },
  { type: 'relation', from: 'Grace Hopper', to: 'COBOL', relationType: 'shaped' },
  { type: 'relation', from: 'Grace Hopper', to: 'Harvard Mark I', relationType: 'programmed' },
]
  .map((o) => JSON.stringify(o))
  .join('\n')

describe('importInto', () => {
  it('adds an MCP memory server file and says what it left out', async () => {
    const f = await fixture()
    const done = await importInto(f.memory, jsonl, { fileName: 'memory.jsonl' })
    expect(done.format).toBe('mcp-memory')
    expect(done.summary).toEqual([
      'entities: 2 of 3',
      'observation strings: 3 of 3, as 2 notes',
      'relations: 1 of 2',
      'not imported: 1 entities without observations (Cairn needs text to describe an entity): Harvard Mark I',
      'not imported: 1 relations: Grace Hopper programmed Harvard Mark I ("Harvard Mark I" has no observations to describe it)',
    ])
    const recalled = await f.conn.recall({ query: 'compiler' })
    expect(recalled.entities.map((e) => e.name)).toContain('Grace Hopper')
    expect((await f.conn.getObservation(recalled.observations[0]!.slug)).source).toBe('mcp-memory:memory.jsonl')
  })

  it('merges a Cairn backup: what the memory lacks comes in, the rest is counted', async () => {
    const from = await fixture()
    await from.conn.write({ title: 'Ada', content: 'Ada wrote about the engine.', entities: [ada, analyticalEngine], relationships: [{ source: ada.name, type: 'wrote about', target: analyticalEngine.name }] })
    const backup = await exportMemory(from.memory)
    const into = await fixture()
    const first = await importInto(into.memory, JSON.stringify(backup))
    expect(first.format).toBe('cairn-backup')
    expect(first.summary).toEqual(['merged: 1 observations (0 already present), 0 merges, 0 files, 0 rejected merges'])
    const again = await importInto(into.memory, JSON.stringify(backup))
    expect(again.summary).toEqual(['merged: 0 observations (1 already present), 0 merges, 0 files, 0 rejected merges'])
    expect((await into.conn.listObservations({})).total).toBe(1)
  })

  it('refuses a file with neither, and adds nothing', async () => {
    const f = await fixture()
    await expect(importInto(f.memory, '{"hello":1}\n{"world":2}')).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(importInto(f.memory, JSON.stringify({ format: 'cairn-memory@1', observations: 'no' }))).rejects.toMatchObject({ code: 'invalid_request' })
    expect((await f.conn.listObservations({})).total).toBe(0)
  })
})

describe('buildMarkdownVault', () => {
  it('gives notes with front matter and entity pages linking both ways', async () => {
    const f = await fixture()
    await importInto(f.memory, jsonl)
    const { files, report } = await buildMarkdownVault(f.memory, new Date('2026-12-03T00:00:00Z'))
    expect(report).toEqual({ notes: 2, entities: 2, files: 0 })
    const byPath = new Map(files.map((x) => [x.path, String(x.data)]))
    const paths = [...byPath.keys()].sort()
    expect(paths.slice(0, 3)).toEqual(['entities/COBOL.md', 'entities/Grace Hopper.md', 'index.md'])
    expect(paths.slice(3)).toEqual([expect.stringMatching(/^notes\/cobol-\w+\.md$/), expect.stringMatching(/^notes\/grace-hopper-\w+\.md$/)])
    expect(byPath.get(paths[4]!)).toMatch(/^---\nslug: "grace-hopper-\w+"\ntitle: "Grace Hopper"\n/)
    const hopper = byPath.get('entities/Grace Hopper.md')!
    expect(hopper).toMatch(/^---\nname: "Grace Hopper"\ntype: "person"\n/)
    expect(hopper).toContain('- shaped → [[entities/COBOL|COBOL]]')
    expect(hopper).toMatch(/\[\[notes\/[^|]+\|Grace Hopper\]\]/)
    expect(byPath.get('index.md')).toContain('exported: "2026-12-03T00:00:00.000Z"')
  })

  it('lists an entity a note names without describing it by its link alone, with no empty type or description', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'Ada', content: 'Ada wrote.', entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician' }] })
    const { slug } = await f.conn.write({ title: 'Ada again', content: 'Ada again.', entities: [{ name: 'Ada Lovelace' }] })
    const { files } = await buildMarkdownVault(f.memory, new Date('2026-12-03T00:00:00Z'))
    const note = String(files.find((x) => x.path === `notes/${slug}.md`)!.data)
    const line = note.split('\n').find((l) => l.includes('Ada Lovelace]]') && l.startsWith('- '))
    expect(line).toMatch(/^- \[\[[^\]]+\]\]$/)
  })
})
