// What installing and running Cairn as a package costs: the tarball, a browser project's
// node_modules, MCP writes on the durable Node store as it grows, a restart, and importing an
// MCP memory server file. Goals: tarball < 10 MB, install < 30 MB, write p50 < 5 ms
// and p95 < 20 ms at 10k, restart at 10k < 1 s, a 10k-entity import < 10 s.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { Memory } from '../../src/engine/memory-handle'
import { importMcpMemory } from '../../src/interop/import'
import { openNodeMemory } from '../../src/node-store/node-memory'
import type { Embedder } from '../../src/search/embedder'
import { dispatchTool } from '../../src/tools/dispatch'
import { observationFor } from './engine'
import { percentile } from './stats'
import { engineOf, ownerOf } from '../../src/internals'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

export interface PackageSizeRow {
  tarballMB: number
  unpackedMB: number
  files: number
  /** node_modules of a project that installs only the tarball (what a browser app adds) */
  installMB: number
  installPackages: number
  /** of installMB: the shipped model and onnxruntime wasm */
  assetsMB: number
}

export interface DurableRow {
  /** `durable`: a folder on disk; `in-process`: the same engine on fake-indexeddb alone, the baseline of the same run */
  store: 'durable' | 'in-process'
  ranking: 'bm25' | 'hybrid'
  observations: number
  /** write tool calls through dispatchTool on the durable store, over the last 1,000 writes (or all, if fewer) */
  writeP50Ms: number
  writeP95Ms: number
  writeMaxMs: number
  logMB: number
  snapshotMB: number
  /** close, then open the folder and answer one recall (the model is loaded before the clock starts) */
  restartMs: number
  /** of restartMs: reading the folder into the in-process IndexedDB */
  restartStoreMs: number
  /** of restartMs: the engine's open on it (read, derive, index) */
  restartOpenMs: number
  /** CPU time of the process over the restart (all its threads): what a busy machine's wall clock hides */
  restartCpuMs: number
}

export interface ImportRow {
  entities: number
  relations: number
  fileMB: number
  /** parse, validate, one transaction, index: until the memory answers */
  importMs: number
  /** CPU time of the process over the import (all its threads) */
  importCpuMs: number
  notes: number
}

const cpuMs = (u: NodeJS.CpuUsage): number => Math.round((u.user + u.system) / 1000)
const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10
function du(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    total += e.isDirectory() ? du(p) : e.isFile() ? statSync(p).size : 0
  }
  return total
}

export function benchPackageSize(): PackageSizeRow {
  const root = mkdtempSync(join(tmpdir(), 'cairn-bench-pkg-'))
  try {
    execFileSync('npm', ['run', '--silent', 'build:lib'], { cwd: REPO, stdio: 'ignore' })
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>
    const p = packed[0]!
    const project = join(root, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'browser-app', private: true, type: 'module' }))
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(root, p.filename)], { cwd: project, stdio: 'ignore' })
    const nm = join(project, 'node_modules')
    const packages = readdirSync(nm).flatMap((d) => (d.startsWith('@') ? readdirSync(join(nm, d)) : d.startsWith('.') ? [] : [d]))
    return {
      tarballMB: mb(p.size),
      unpackedMB: mb(p.unpackedSize),
      files: p.entryCount,
      installMB: mb(du(nm)),
      installPackages: packages.length,
      assetsMB: mb(du(join(nm, 'cairn-memory', 'assets'))),
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

export async function benchDurable(sizes: number[], embedder?: Embedder): Promise<DurableRow[]> {
  const rows: DurableRow[] = []
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-store-'))
    try {
      const opened = await openNodeMemory(dir, { name: `bench-${n}`, ...(embedder ? { embedder } : {}) })
      const conn = await opened.memory.connect({ agent: 'bench', tier: 'full' })
      const ms: number[] = []
      for (let i = 0; i < n; i++) {
        const args = observationFor(i, Math.max(10, n))
        const t = performance.now()
        const out = await dispatchTool(conn, 'write', args)
        ms.push(performance.now() - t)
        if (!out.ok) throw new Error(`write ${i} failed: ${out.error.message}`)
      }
      const stats = opened.store.stats()
      await opened.close()
      const tail = ms.slice(-1_000)
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      const again = await openNodeMemory(dir, embedder ? { embedder } : {})
      const reader = await again.memory.connect({ agent: 'bench', tier: 'read' })
      const recall = await reader.recall({ query: 'Entity 7' })
      const restartMs = Math.round(performance.now() - t0)
      const restartCpuMs = cpuMs(process.cpuUsage(c0))
      // the texts come in after the open: all of them, to see none was lost
      await ownerOf(again.memory).notesHeld()
      if (engineOf(again.memory).committedGraph.allObservations().next().done || !recall.entities.length) throw new Error('the reopened store lost its observations')
      await again.close()
      rows.push({
        store: 'durable',
        ranking: embedder ? 'hybrid' : 'bm25',
        observations: n,
        writeP50Ms: percentile(tail, 50),
        writeP95Ms: percentile(tail, 95),
        writeMaxMs: Math.round(Math.max(...tail) * 10) / 10,
        logMB: mb(stats.logBytes),
        snapshotMB: mb(stats.snapshotBytes),
        restartMs,
        restartStoreMs: again.timings.storeMs,
        restartOpenMs: again.timings.memoryMs,
        restartCpuMs,
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    rows.push(await inProcessBaseline(n, embedder))
  }
  return rows
}

/** The same writes and reopen without the folder: what the engine costs on fake-indexeddb alone. */
async function inProcessBaseline(n: number, embedder?: Embedder): Promise<DurableRow> {
  const deps = { indexedDB: new IDBFactory(), IDBKeyRange }
  const memory = await Memory.create({ name: `bench-${n}`, ...deps, ...(embedder ? { embedder } : {}) })
  const conn = await memory.connect({ agent: 'bench', tier: 'full' })
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const args = observationFor(i, Math.max(10, n))
    const t = performance.now()
    const out = await dispatchTool(conn, 'write', args)
    ms.push(performance.now() - t)
    if (!out.ok) throw new Error(`write ${i} failed: ${out.error.message}`)
  }
  await memory.close()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const again = await Memory.open(memory.info.id, { ...deps, ...(embedder ? { embedder } : {}) })
  const openMs = Math.round(performance.now() - t0)
  await (await again.connect({ agent: 'bench', tier: 'read' })).recall({ query: 'Entity 7' })
  const restartMs = Math.round(performance.now() - t0)
  const restartCpuMs = cpuMs(process.cpuUsage(c0))
  await again.close()
  const tail = ms.slice(-1_000)
  return {
    store: 'in-process', ranking: embedder ? 'hybrid' : 'bm25', observations: n,
    writeP50Ms: percentile(tail, 50), writeP95Ms: percentile(tail, 95), writeMaxMs: Math.round(Math.max(...tail) * 10) / 10,
    logMB: 0, snapshotMB: 0, restartMs, restartStoreMs: 0, restartOpenMs: openMs, restartCpuMs,
  }
}

/** An MCP memory server file as its saveGraph writes it: entities with two observations each, one relation per entity. */
export function mcpMemoryFile(entities: number): string {
  const lines: string[] = []
  for (let i = 0; i < entities; i++) {
    const o = observationFor(i, entities)
    lines.push(JSON.stringify({ type: 'entity', name: `Entity ${i}`, entityType: ['person', 'project', 'organization'][i % 3], observations: [o.entities![0]!.description, o.content] }))
  }
  for (let i = 0; i < entities; i++) lines.push(JSON.stringify({ type: 'relation', from: `Entity ${i}`, to: `Entity ${(i * 7 + 3) % entities}`, relationType: 'works_with' }))
  return lines.join('\n')
}

export async function benchMcpImport(sizes: number[], embedder?: Embedder): Promise<ImportRow[]> {
  const rows: ImportRow[] = []
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-import-'))
    try {
      const text = mcpMemoryFile(n)
      const opened = await openNodeMemory(dir, embedder ? { embedder } : {})
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      const report = await importMcpMemory(opened.memory, text)
      const importMs = Math.round(performance.now() - t0)
      const importCpuMs = cpuMs(process.cpuUsage(c0))
      if (report.entities.imported !== n) throw new Error(`imported ${report.entities.imported} of ${n} entities`)
      await opened.close()
      rows.push({ entities: n, relations: report.relations.imported, fileMB: mb(Buffer.byteLength(text)), importMs, importCpuMs, notes: report.notes })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return rows
}
