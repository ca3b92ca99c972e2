// The packed tarball, installed outside the repository: the library in plain Node (hybrid recall
// with the shipped model), `npx <tarball> mcp` driven by the official SDK client with nothing but
// JSON-RPC on stdout, import of a file the official MCP memory server wrote, and a backup that
// goes through `cairn import` and `cairn export` with nothing lost, and a Vite app built from it
// that recalls in Chromium with the default embedder loaded.
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM_PATH } from '../e2e/harness'
import { packAndInstall, repo, type Scratch } from './scratch'

let s: Scratch
beforeAll(() => {
  s = packAndInstall()
}, 240_000)
afterAll(() => {
  if (s) rmSync(s.root, { recursive: true, force: true })
}, 120_000)

const node = (script: string, cwd: string): string => {
  const file = join(cwd, `script-${Math.random().toString(36).slice(2)}.mjs`)
  writeFileSync(file, script)
  return execFileSync(process.execPath, [file], { cwd, encoding: 'utf8' })
}
const cairn = (args: string[]): string => execFileSync(join(s.project, 'node_modules/.bin/cairn'), args, { cwd: s.root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> }
  const body = JSON.parse(r.content[0]!.text)
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(body)}`)
  return body
}

/** The address a Vite server (dev or preview) prints once it listens: "Local: http://127.0.0.1:PORT/". */
function localUrl(vite: ChildProcessByStdio<null, Readable, null>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = ''
    vite.stdout.on('data', (c: Buffer) => {
      text += c.toString().replace(/\u001b\[[0-9;]*m/g, '') // strip colors
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(text)
      if (m) resolve(m[0])
    })
    vite.once('exit', () => reject(new Error(`vite exited: ${text}`)))
  })
}

describe('the installed package', () => {
  it('imports in plain Node ESM and recalls with the default embedder from its own files', () => {
    const out = node(
      `import { createMemory, createDefaultEmbedder } from 'cairn-memory'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
const embedder = await createDefaultEmbedder()
const memory = await createMemory({ name: 'n', indexedDB: new IDBFactory(), IDBKeyRange, embedder })
const c = await memory.connect({ agent: 'a' })
await c.write({ title: 'Ada', content: 'Ada wrote the notes.', entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first program' }] })
await c.write({ title: 'Cook', content: 'A recipe.', entities: [{ name: 'Sourdough', type: 'food', description: 'Bread leavened with wild yeast' }] })
const r = await c.recall({ query: 'the first programmer' })
console.log(JSON.stringify({ embedder: memory.info.retrieval.embedder, vector: memory.info.retrieval.weights.vector, top: r.entities[0]?.name, signals: r.signals }))
await memory.close()
`,
      s.project,
    )
    const result = JSON.parse(out.trim().split('\n').pop()!)
    // the recall embedded its query with the package's own model (a failed load would have thrown)
    expect(result).toEqual({ embedder: 'cairn-glove-100d@1', vector: 0.4, top: 'Ada Lovelace', signals: { words: true, vectors: true, model: 'cairn-glove-100d@1' } })
  }, 60_000)

  it('keeps the runtime and model gzipped, and `cairn assets` writes them out as a page loads them', () => {
    const shipped = join(s.project, 'node_modules/cairn-memory/assets')
    expect(readdirSync(join(shipped, 'ort')).sort()).toEqual(['NOTICE.md', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm.gz'])
    expect(readdirSync(join(shipped, 'models')).sort()).toEqual(['NOTICE.md', 'cairn-glove-100d.json', 'cairn-glove-100d.onnx.gz', 'cairn-glove-100d.vocab.txt.gz'])
    const dir = join(s.root, 'static')
    expect(cairn(['assets', dir])).toContain('ort/ort-wasm-simd-threaded.wasm')
    expect(readdirSync(join(dir, 'ort')).sort()).toEqual(['NOTICE.md', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'])
    expect(readdirSync(join(dir, 'models')).sort()).toEqual(['NOTICE.md', 'cairn-glove-100d.json', 'cairn-glove-100d.onnx', 'cairn-glove-100d.vocab.txt'])
    const runtime = createRequire(join(repo, 'package.json')).resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm')
    expect(readFileSync(join(dir, 'ort/ort-wasm-simd-threaded.wasm')).equals(readFileSync(runtime))).toBe(true)
    expect(readFileSync(join(dir, 'models/cairn-glove-100d.onnx')).equals(readFileSync(join(repo, 'public/models/cairn-glove-100d.onnx')))).toBe(true)
    expect(() => cairn(['assets'])).toThrow(/assets takes one folder/)
  })

  it('declares a public entry that names no database class, no engine and no graph', () => {
    const types = join(s.project, 'node_modules/cairn-memory/lib/types')
    // every declaration file the public entry reaches, following relative imports
    const reached = new Set<string>()
    const visit = (file: string): void => {
      if (reached.has(file) || !existsSync(file)) return
      reached.add(file)
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        visit(join(dirname(file), spec!.replace(/\.js$/, '.d.ts')))
      }
    }
    visit(join(types, 'src/index.d.ts'))
    expect(reached.size).toBeGreaterThan(10)
    const named = [...reached].flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      return ['Dexie', 'MemoryDB', 'MemoryEngine', 'GraphView', 'class Graph', 'engineOf', 'ownerOf', 'MemoryOwner'].filter((w) => text.includes(w)).map((w) => `${file.slice(types.length + 1)}: ${w}`)
    })
    expect(named).toEqual([])
    // the owner-level operations the package's own exports use are not on the published Memory
    const memory = readFileSync(join(types, 'src/engine/memory-handle.d.ts'), 'utf8')
    expect(memory).toContain('connect(opts')
    expect(memory).not.toMatch(/\b(onChange|notesHeld|committed|inspect|listFiles|readFile|listProposals|storedAliases|importObservations|importSnapshot|storeFileAs|mergeChange|rename)\b/)
  })

  it('serves MCP from `npx <tarball> mcp` in another directory: JSON-RPC only on stdout, durable across restarts', async () => {
    const cwd = join(s.root, 'elsewhere')
    const dir = join(s.root, 'mcp-store')
    mkdirSync(cwd, { recursive: true })
    const start = async (): Promise<{ client: Client; errors: Error[]; stderr: () => string }> => {
      const transport = new StdioClientTransport({
        command: 'npx',
        args: ['--yes', '--prefer-offline', `--package=${s.tarball}`, '--', 'cairn', 'mcp', '--dir', dir, '--tier', 'full'],
        cwd,
        env: { ...getDefaultEnvironment(), npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' },
        stderr: 'pipe',
      })
      let stderr = ''
      transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
      const client = new Client({ name: 'package-test', version: '0' })
      const errors: Error[] = []
      // a line on stdout that is not JSON-RPC surfaces here (the SDK's parser throws on it)
      client.onerror = (e) => void errors.push(e)
      await client.connect(transport)
      return { client, errors, stderr: () => stderr }
    }

    const first = await start()
    const { tools } = await first.client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    expect(byName.get('recall')?.annotations).toMatchObject({ readOnlyHint: true })
    expect(byName.get('delete')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })
    expect(byName.get('write')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
    const written = await call(first.client, 'write', {
      title: 'Grace Hopper',
      content: 'Grace Hopper built the first compiler.',
      entities: [{ name: 'Grace Hopper', type: 'person', description: 'Computer scientist who built the first compiler' }],
    })
    const { resources } = await first.client.listResources()
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining([`cairn://observation/${written.slug}`, 'cairn://entity/Grace%20Hopper']))
    const read = await first.client.readResource({ uri: 'cairn://entity/Grace%20Hopper' })
    expect(JSON.parse((read.contents[0] as { text: string }).text).entity.description).toContain('compiler')
    const memoryId = /memory "[^"]*" \(([^,]+),/.exec(first.stderr())?.[1]
    await first.client.close()
    expect(first.errors).toEqual([])

    const second = await start()
    const recall = await call(second.client, 'recall', { query: 'who made compilers' })
    expect(recall.entities[0].name).toBe('Grace Hopper')
    expect(await call(second.client, 'get_observation', { slug: written.slug })).toMatchObject({ slug: written.slug })
    expect(/memory "[^"]*" \(([^,]+),/.exec(second.stderr())?.[1]).toBe(memoryId)
    await second.client.close()
    expect(second.errors).toEqual([])
    expect(memoryId).toBeTruthy()
  }, 120_000)

  it('imports a file the official MCP memory server wrote, and reports what it could not map', async () => {
    const file = join(s.root, 'official', 'memory.jsonl')
    mkdirSync(join(s.root, 'official'))
    const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js')
    const client = new Client({ name: 'package-test', version: '0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry], env: { PATH: process.env.PATH ?? '', MEMORY_FILE_PATH: file }, stderr: 'ignore' }))
    const tool = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args })
    await tool('create_entities', {
      entities: [
        { name: 'Ada Lovelace', entityType: 'person', observations: ['Wrote the first published algorithm', 'Worked with Charles Babbage'] },
        { name: 'Analytical Engine', entityType: 'machine', observations: ['A proposed mechanical general-purpose computer'] },
        { name: 'Charles Babbage', entityType: 'person', observations: [] },
      ],
    })
    await tool('add_observations', { observations: [{ entityName: 'Analytical Engine', contents: ['Designed by Charles Babbage in 1837'] }] })
    await tool('create_relations', {
      relations: [
        { from: 'Ada Lovelace', to: 'Analytical Engine', relationType: 'wrote programs for' },
        { from: 'Charles Babbage', to: 'Analytical Engine', relationType: 'designed' },
      ],
    })
    await client.close()
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(5)

    const dir = join(s.root, 'imported')
    const summary = cairn(['import', file, '--dir', dir, '--report', join(s.root, 'report.json')])
    expect(summary).toContain('entities: 2 of 3')
    const report = JSON.parse(readFileSync(join(s.root, 'report.json'), 'utf8'))
    expect(report.entities.withoutObservations).toEqual(['Charles Babbage'])
    expect(report.observationStrings).toMatchObject({ read: 4, imported: 4 })
    expect(report.relations.imported).toBe(1)
    expect(report.relations.skipped).toEqual([expect.objectContaining({ from: 'Charles Babbage', relationType: 'designed', reason: expect.stringContaining('no observations') })])

    cairn(['export', '--dir', dir, '--json', join(s.root, 'imported.json')])
    const graph = JSON.parse(readFileSync(join(s.root, 'imported.json'), 'utf8')).graph
    expect(graph.entities.map((e: { name: string }) => e.name).sort()).toEqual(['Ada Lovelace', 'Analytical Engine'])
    expect(graph.relationships).toEqual([expect.objectContaining({ sourceName: 'Ada Lovelace', type: 'wrote_programs_for', targetName: 'Analytical Engine' })])
    const engine = graph.entities.find((e: { name: string }) => e.name === 'Analytical Engine')
    expect(engine.description).toContain('Designed by Charles Babbage in 1837')
  }, 60_000)

  it('round-trips a backup through cairn import and cairn export with nothing lost, and writes a vault', () => {
    const backupFile = join(s.root, 'backup.json')
    node(
      `import { createMemory, createDefaultEmbedder, exportMemory } from 'cairn-memory'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { writeFileSync } from 'node:fs'
const memory = await createMemory({ name: 'round trip', indexedDB: new IDBFactory(), IDBKeyRange, embedder: await createDefaultEmbedder(), retrieval: { snippetLength: 120 } })
const c = await memory.connect({ agent: 'a', tier: 'full' })
const ibm = { name: 'IBM', type: 'organization', description: 'Computer company from Armonk' }
const big = { name: 'International Business Machines', type: 'organization', description: 'Computer company from Armonk, New York' }
const ibmCorp = { name: 'IBM Corp.', type: 'organization', description: 'Computer company based in Armonk' }
await c.write({ title: 'IBM', content: 'IBM built mainframes.', tags: ['history'], entities: [ibm, { name: 'System/360', type: 'product', description: 'Mainframe family from 1964' }], relationships: [{ source: 'IBM', type: 'built', target: 'System/360' }] })
await c.write({ title: 'Big Blue', content: 'International Business Machines is called Big Blue.', entities: [big] })
await c.write({ title: 'Corp', content: 'IBM Corp. files reports.', entities: [ibmCorp] })
await c.storeFile({ path: 'sources/ibm.txt', filename: 'ibm.txt', type: 'text/plain', data: new TextEncoder().encode('source text'), description: 'the source' })
const proposals = await c.consolidate()
const first = proposals.find((p) => p.names.includes('IBM Corp.'))
if (first) await c.acceptProposal(first.id, { canonical: 'IBM' })
const rest = (await c.listProposals()).filter((p) => p.status === 'open')
for (const p of rest) await c.rejectProposal(p.id)
writeFileSync(${JSON.stringify(backupFile)}, JSON.stringify(await exportMemory(memory)))
await memory.close()
`,
      s.project,
    )
    const backup = JSON.parse(readFileSync(backupFile, 'utf8'))
    expect(backup.observations).toHaveLength(3)
    expect(backup.aliases.length + backup.rejectedProposals.length).toBeGreaterThan(0)

    const dir = join(s.root, 'restored')
    cairn(['import', backupFile, '--dir', dir])
    const out = join(s.root, 'restored.json')
    cairn(['export', '--dir', dir, '--json', out])
    const again = JSON.parse(readFileSync(out, 'utf8'))
    const bySlug = (list: Array<{ slug: string }>) => [...list].sort((a, b) => a.slug.localeCompare(b.slug))
    expect(bySlug(again.observations)).toEqual(bySlug(backup.observations))
    expect(again.aliases.map((a: { variant: string; canonical: string }) => [a.variant, a.canonical]).sort()).toEqual(backup.aliases.map((a: { variant: string; canonical: string }) => [a.variant, a.canonical]).sort())
    expect(again.rejectedProposals.map((p: { id: string }) => p.id).sort()).toEqual(backup.rejectedProposals.map((p: { id: string }) => p.id).sort())
    expect(again.files.map(({ path, sha256, data }: Record<string, string>) => ({ path, sha256, data }))).toEqual(backup.files.map(({ path, sha256, data }: Record<string, string>) => ({ path, sha256, data })))
    expect(again.info).toEqual(backup.info)

    const vault = join(s.root, 'vault')
    cairn(['export', '--dir', dir, '--markdown', vault])
    const notes = readdirSync(join(vault, 'notes'))
    expect(notes.sort()).toEqual(backup.observations.map((o: { slug: string }) => `${o.slug}.md`).sort())
    const ibmNote = readFileSync(join(vault, 'notes', notes.find((n) => n.startsWith('ibm-'))!), 'utf8')
    expect(ibmNote).toMatch(/^---\nslug: "ibm-[a-z0-9]+"\ntitle: "IBM"\n/)
    expect(ibmNote).toContain('[[entities/IBM|IBM]] → built → [[entities/System-360|System/360]]')
    const ibmPage = readFileSync(join(vault, 'entities', 'IBM.md'), 'utf8')
    expect(ibmPage).toContain('built → [[entities/System-360|System/360]]')
    expect(existsSync(join(vault, 'files', 'sources', 'ibm.txt'))).toBe(true)
  }, 60_000)

  it('builds into a Vite app whose page recalls in Chromium with the default embedder (hybrid)', async () => {
    const app = join(s.root, 'vite-app')
    mkdirSync(join(app, 'src'), { recursive: true })
    const vite = (JSON.parse(readFileSync(join(repo, 'node_modules/vite/package.json'), 'utf8')) as { version: string }).version
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'vite-app', private: true, type: 'module' }))
    writeFileSync(join(app, 'index.html'), '<!doctype html><html><body><pre id="out">loading</pre><script type="module" src="/src/main.js"></script></body></html>')
    writeFileSync(join(app, 'vite.config.js'), "import { defineConfig } from 'vite'\nimport { cairnAssets } from 'cairn-memory/vite'\nexport default defineConfig({ plugins: [cairnAssets()], build: { target: 'es2022' } })\n")
    writeFileSync(
      join(app, 'src/main.js'),
      `import { createMemory, createDefaultEmbedder } from 'cairn-memory'
const out = document.getElementById('out')
try {
  const memory = await createMemory({ name: 'browser', embedder: await createDefaultEmbedder() })
  const c = await memory.connect({ agent: 'page' })
  await c.write({ title: 'Ada', content: 'Ada wrote the notes.', entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first program' }] })
  await c.write({ title: 'Bread', content: 'A recipe.', entities: [{ name: 'Sourdough', type: 'food', description: 'Bread leavened with wild yeast' }] })
  const r = await c.recall({ query: 'the first programmer' })
  out.textContent = JSON.stringify({ embedder: memory.info.retrieval.embedder, top: r.entities[0]?.name, vectors: r.signals?.vectors })
} catch (e) {
  out.textContent = 'error: ' + e.message
}
`,
    )
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', s.tarball, `vite@${vite}`], { cwd: app, stdio: 'ignore' })
    execFileSync(join(app, 'node_modules/.bin/vite'), ['build'], { cwd: app, stdio: 'ignore' })
    expect(readdirSync(join(app, 'dist/ort')).sort()).toEqual(['NOTICE.md', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'])
    const server = spawn(join(app, 'node_modules/.bin/vite'), ['preview', '--host', '127.0.0.1', '--port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'ignore'] })
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH })
    try {
      const url = await localUrl(server)
      const page = await browser.newPage()
      await page.goto(url)
      await page.waitForFunction(() => document.getElementById('out')!.textContent !== 'loading', null, { timeout: 60_000 })
      expect(JSON.parse((await page.textContent('#out'))!)).toEqual({ embedder: 'cairn-glove-100d@1', top: 'Ada Lovelace', vectors: true })
    } finally {
      await browser.close()
      server.kill()
    }
    // the dev server serves the same files, expanded from the package's gzipped copies
    const dev = spawn(join(app, 'node_modules/.bin/vite'), ['--host', '127.0.0.1', '--port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const url = await localUrl(dev)
      const wasm = await fetch(`${url}ort/ort-wasm-simd-threaded.wasm`)
      expect(wasm.headers.get('content-type')).toBe('application/wasm')
      expect(Buffer.from(await wasm.arrayBuffer()).equals(readFileSync(join(app, 'dist/ort/ort-wasm-simd-threaded.wasm')))).toBe(true)
      const vocab = await fetch(`${url}models/cairn-glove-100d.vocab.txt`)
      expect(await vocab.text()).toBe(readFileSync(join(repo, 'public/models/cairn-glove-100d.vocab.txt'), 'utf8'))
      // a path out of the folder is refused, never served from beside it
      expect((await fetch(`${url}models/..%2fpackage.json`)).status).toBe(404)
      expect((await fetch(`${url}ort/missing.wasm`)).status).toBe(404)
    } finally {
      dev.kill()
    }
  }, 180_000)
})
