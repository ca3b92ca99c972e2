// The app's import and export beside the CLI's: a file the official MCP memory server wrote
// comes into a memory with the same report, and the memory goes out as the graph in JSON and as
// an Obsidian vault in a ZIP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile } from 'node:fs/promises'
import { startHarness, type Harness } from './harness'
import { createMemory, openMemoryMenu, recall } from './ui'
import { readStoredZip } from '../interop/zip-reader'

// as the official server writes memory.jsonl: one JSON object a line, entities then relations
const memoryJsonl = [
  { type: 'entity', name: 'Grace Hopper', entityType: 'person', observations: ['Built the first compiler', 'Rear admiral in the US Navy'] },
  { type: 'entity', name: 'COBOL', entityType: 'language', observations: ['A business programming language she shaped'] },
  { type: 'entity', name: 'Harvard Mark I', entityType: 'machine', observations: [] },
  { type: 'relation', from: 'Grace Hopper', to: 'COBOL', relationType: 'shaped' },
  { type: 'relation', from: 'Grace Hopper', to: 'Harvard Mark I', relationType: 'programmed' },
]
  .map((o) => JSON.stringify(o))
  .join('\n')

describe('import and export in the app', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startHarness()
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('imports an MCP memory server file and exports the graph and an Obsidian vault', async () => {
    const page = await harness.openApp('/')
    await createMemory(page, 'Computing pioneers')
    await openMemoryMenu(page)

    // a file that is neither format is refused with the engine's reason
    await page.getByTestId('import-into-memory').setInputFiles({ name: 'notes.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from('{"hello":1}\n{"world":2}\n') })
    await expect.poll(() => page.getByTestId('backup-panel').getByRole('alert').textContent()).toContain('invalid_request')

    await page.getByTestId('import-into-memory').setInputFiles({ name: 'memory.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(memoryJsonl) })
    const report = page.getByTestId('import-report')
    await expect.poll(() => report.textContent(), { timeout: 20_000 }).toContain('Imported memory.jsonl (MCP memory server file)')
    expect(await report.locator('li').allTextContents()).toEqual([
      'entities: 2 of 3',
      'observation strings: 3 of 3, as 2 notes',
      'relations: 1 of 2',
      'not imported: 1 entities without observations (Cairn needs text to describe an entity): Harvard Mark I',
      'not imported: 1 relations: Grace Hopper programmed Harvard Mark I ("Harvard Mark I" has no observations to describe it)',
    ])
    await harness.screenshot(page, 'mcp-memory-imported')
    expect(await recall(page, 'first compiler')).toContain('Grace Hopper')

    await openMemoryMenu(page)
    const [graphDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-graph').click()])
    expect(graphDownload.suggestedFilename()).toBe('Computing-pioneers.graph.json')
    const graph = JSON.parse(await readFile(await graphDownload.path(), 'utf8'))
    expect(graph.format).toBe('cairn-memory@1')
    expect(graph.graph.entities.map((e: { name: string }) => e.name).sort()).toEqual(['COBOL', 'Grace Hopper'])
    expect(graph.graph.relationships.map((r: { sourceName: string; type: string; targetName: string }) => `${r.sourceName} ${r.type} ${r.targetName}`)).toEqual(['Grace Hopper shaped COBOL'])

    const [vaultDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-vault').click()])
    expect(vaultDownload.suggestedFilename()).toBe('Computing-pioneers-vault.zip')
    const vault = readStoredZip(new Uint8Array(await readFile(await vaultDownload.path())))
    const text = (path: string): string => new TextDecoder().decode(vault.get(path))
    const paths = [...vault.keys()].sort()
    expect(paths.filter((p) => p.startsWith('Computing-pioneers/entities/'))).toEqual(['Computing-pioneers/entities/COBOL.md', 'Computing-pioneers/entities/Grace Hopper.md'])
    expect(paths.filter((p) => p.startsWith('Computing-pioneers/notes/'))).toHaveLength(2)
    expect(paths).toContain('Computing-pioneers/index.md')
    const hopper = text('Computing-pioneers/entities/Grace Hopper.md')
    expect(hopper).toMatch(/^---\nname: "Grace Hopper"\ntype: "person"\n/)
    expect(hopper).toContain('- shaped → [[entities/COBOL|COBOL]]')
    const note = text(paths.find((p) => p.startsWith('Computing-pioneers/notes/grace-hopper'))!)
    expect(note).toMatch(/^---\nslug: "grace-hopper-\w+"\ntitle: "Grace Hopper"\n/)
    expect(note).toContain('source: "mcp-memory:memory.jsonl"')
    expect(note).toContain('[[entities/COBOL|COBOL]]')
    expect(harness.pageErrors).toEqual([])
  })
})
