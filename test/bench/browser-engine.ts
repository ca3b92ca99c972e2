// Engine benchmark in a real browser: builds the benchmark page (test/bench/browser/) with the
// app's Vite config, serves it on 127.0.0.1 and drives headless Debian Chromium. Inside module
// workers, on real IndexedDB and (for hybrid) the shipped cairn-glove-100d model on
// onnxruntime-web, it fills a memory, saves the index, and times in a fresh worker a cold open
// and recall. Alone: `npx tsx test/bench/browser-engine.ts [sizes...]`.
// CAIRN_BENCH_DIST=<dir> reuses a build of this page instead of building again.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import type { ObservationInput } from '../../src/core/types'
import { observationFor } from './engine'
import { percentile } from './stats'

const root = fileURLToPath(new URL('../..', import.meta.url))
const PAGE = 'test/bench/browser/index.html'
const QUERIES = 101
/** Cold opens per row, each in a fresh worker; the row reports their median (the host is shared). */
const COLD_RUNS = 3
// The flags of test/e2e/harness.ts, which cannot be imported outside vitest (it uses inject).
const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

export interface BrowserEngineRow {
  recall: 'bm25' | 'hybrid'
  /** As stored in the memory's retrieval config. */
  embedder: string
  observations: number
  entities: number
  relationships: number
  /** importObservations of the whole set in one transaction, with indexing. */
  loadMs: number
  saveIndexMs: number
  /** Loading the static model in a fresh worker, from Cache Storage (0 for BM25). Not part of coldOpenMs. */
  modelLoadMs: number
  /** Memory.open in a fresh worker: IndexedDB read, the saved graph taken as it is, index restore. */
  openMs: number
  firstRecallMs: number
  /** open + first recall: the time until recall answers, with the model already loaded. */
  coldOpenMs: number
  /** The steps of open timed one by one afterwards: IndexedDB read, graph from the saved one, index restore. */
  openReadMs: number
  openFromRowsMs: number
  /** A derive from the observations, which open does only when the derivation rules changed. */
  openDeriveMs: number
  openRestoreIndexMs: number
  /** False would mean open rebuilt the index instead of restoring the saved one. */
  snapshotCurrent: boolean
  /** Over the recalls after the first, of all cold runs. */
  recallP50Ms: number
  recallP95Ms: number
  /** Entities per timed recall, on average (queries are words of real descriptions). */
  hitsPerRecall: number
}

interface Filled { id: string; token: string; entities: number; relationships: number; loadMs: number; saveIndexMs: number }
interface Timings { modelLoadMs: number; openMs: number; firstRecallMs: number; recallMs: number[]; hits: number; embedder: string; phases: { readMs: number; fromRowsMs: number; deriveMs: number; restoreIndexMs: number; snapshotCurrent: boolean } }

/** Two words of some entity's description, as a person would half-remember it (as in engine.ts). */
function queriesFor(n: number): string[] {
  return Array.from({ length: QUERIES }, (_, q) => {
    const words = (observationFor((q * 7919) % n, n).entities?.[0]?.description ?? '').split(' ')
    return `${words[1]} ${words[4]}`
  })
}

async function buildPage(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const reuse = process.env.CAIRN_BENCH_DIST
  if (reuse) return { dir: resolve(root, reuse), cleanup: async () => undefined }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-dist-'))
  await build({
    root,
    configFile: join(root, 'vite.config.ts'),
    mode: 'production',
    logLevel: 'warn',
    build: { outDir: dir, emptyOutDir: true, rolldownOptions: { input: join(root, PAGE) } },
  })
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

async function serve(dir: string): Promise<{ server: PreviewServer; baseUrl: string }> {
  const server = await preview({
    root,
    configFile: join(root, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: dir },
    preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false },
  })
  const baseUrl = server.resolvedUrls?.local[0]
  if (!baseUrl) {
    await server.close()
    throw new Error('the benchmark server did not report a local URL')
  }
  return { server, baseUrl }
}

async function measure(context: BrowserContext, n: number, hybrid: boolean): Promise<BrowserEngineRow> {
  const page = await context.newPage()
  try {
    await page.goto(PAGE)
    await page.waitForSelector('html[data-ready="true"]')
    const inputs: ObservationInput[] = Array.from({ length: n }, (_, i) => observationFor(i, n))
    const filled = await page.evaluate(([name, inputs, hybrid]) => window.cairnBench!.fill(name, inputs, hybrid), [`bench-${hybrid ? 'hybrid' : 'bm25'}-${n}`, inputs, hybrid] as const) as Filled
    const runs: Timings[] = []
    for (let r = 0; r < COLD_RUNS; r++) {
      runs.push(await page.evaluate(([id, token, hybrid, queries]) => window.cairnBench!.recall(id, token, hybrid, queries), [filled.id, filled.token, hybrid, queriesFor(n)] as const) as Timings)
    }
    const median = (pick: (t: Timings) => number): number => percentile(runs.map(pick), 50)
    const recallMs = runs.flatMap((t) => t.recallMs)
    const hits = runs.reduce((sum, t) => sum + t.hits, 0)
    const round = (x: number): number => Math.round(x * 10) / 10
    if (hits === 0) throw new Error(`no recall at ${n} observations found anything: the queries do not match the generated data`)
    return {
      recall: hybrid ? 'hybrid' : 'bm25',
      embedder: runs[0]!.embedder,
      observations: n,
      entities: filled.entities,
      relationships: filled.relationships,
      loadMs: Math.round(filled.loadMs),
      saveIndexMs: Math.round(filled.saveIndexMs),
      modelLoadMs: Math.round(median((t) => t.modelLoadMs)),
      openMs: Math.round(median((t) => t.openMs)),
      firstRecallMs: round(median((t) => t.firstRecallMs)),
      coldOpenMs: Math.round(median((t) => t.openMs + t.firstRecallMs)),
      openReadMs: Math.round(median((t) => t.phases.readMs)),
      openFromRowsMs: Math.round(median((t) => t.phases.fromRowsMs)),
      openDeriveMs: Math.round(median((t) => t.phases.deriveMs)),
      openRestoreIndexMs: Math.round(median((t) => t.phases.restoreIndexMs)),
      snapshotCurrent: runs.every((t) => t.phases.snapshotCurrent),
      recallP50Ms: percentile(recallMs, 50),
      recallP95Ms: percentile(recallMs, 95),
      hitsPerRecall: round(hits / Math.max(1, recallMs.length)),
    }
  } finally {
    await page.close()
  }
}

/** Hybrid rows for each size, then a BM25-only row at the largest size for comparison. */
export async function benchBrowserEngine(sizes: number[]): Promise<BrowserEngineRow[]> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`the browser benchmark needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  const { dir, cleanup } = await buildPage()
  const userDataDir = await mkdtemp(join(tmpdir(), 'cairn-bench-profile-'))
  let server: PreviewServer | undefined
  let context: BrowserContext | undefined
  try {
    const served = await serve(dir)
    server = served.server
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, baseURL: served.baseUrl })
    context.setDefaultTimeout(300_000)
    const errors: string[] = []
    context.on('weberror', (e) => errors.push(e.error().message))
    const rows: BrowserEngineRow[] = []
    for (const n of sizes) rows.push(await measure(context, n, true))
    const largest = Math.max(...sizes)
    if (Number.isFinite(largest)) rows.push(await measure(context, largest, false))
    if (errors.length) throw new Error(`the benchmark page reported errors: ${errors.join('; ')}`)
    return rows
  } finally {
    await context?.close().catch(() => undefined)
    await server?.close().catch(() => undefined)
    await rm(userDataDir, { recursive: true, force: true })
    await cleanup()
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  const rows = await benchBrowserEngine(sizes.length ? sizes : [1_000, 10_000])
  console.log('\nEngine in headless Chromium (module worker, real IndexedDB, cairn-glove-100d on onnxruntime-web wasm)')
  console.table(rows)
  console.log(JSON.stringify(rows, null, 2))
}
