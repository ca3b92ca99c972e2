// Engine benchmark in a real browser: builds the benchmark page (test/bench/browser/) with the
// app's Vite config, serves it on 127.0.0.1 and drives headless Debian Chromium. Inside module
// workers, on real IndexedDB and (for hybrid) the shipped cairn-glove-100d model on
// onnxruntime-web, it fills a memory, saves the index, and times in a fresh worker a cold open
// and recall. Alone: `npx tsx test/bench/browser-engine.ts [sizes...] [--hybrid]`.
// CAIRN_BENCH_DIST=<dir> reuses a build of this page instead of building again.
// CAIRN_BENCH_PROFILE=<dir> keeps the filled Chromium profile in <dir>: the first run fills it,
// later runs time cold opens and recalls on a fresh copy of it (a 100k fill takes many minutes).
// The page is then served on one port (CAIRN_BENCH_PORT, default 41731): a profile's memories
// belong to that origin.
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
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
/** Cold opens per row, each in a fresh worker; the row reports their median (the host is shared). CAIRN_BENCH_COLD_RUNS changes it. */
const COLD_RUNS = Number(process.env.CAIRN_BENCH_COLD_RUNS) || 3
/** Timed writes, in the last cold run only (they change the memory the next run would open). */
const WRITES = 50
/** The server's port when a profile is kept (CAIRN_BENCH_PORT to change it): IndexedDB belongs to an origin, port included. */
const KEPT_PROFILE_PORT = Number(process.env.CAIRN_BENCH_PORT) || 41_731
/** Observations per message to the page while staging a fill. */
const STAGE_CHUNK = 5_000
// The flags of test/e2e/harness.ts, which cannot be imported outside vitest (it uses inject).
export const CHROMIUM_PATH = '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

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
  /** Of the first recall, reading the notes it shows that the open left in storage. */
  firstNoteReadMs: number
  /** Such reads by the recalls in all (the last cold run): how many, and their time in all. */
  noteReads: string
  /** open + first recall: the time until recall answers, with the model already loaded. */
  coldOpenMs: number
  /** Each cold run's open + first recall, with the open's steps, in order: the medians are taken apart, so this tells a slow step from noise. */
  coldRuns: string
  /** The steps of open timed one by one afterwards: IndexedDB read, graph from the saved one, index restore. */
  openReadMs: number
  openFromRowsMs: number
  /** A derive from the observations, which open does only when the derivation rules changed. */
  openDeriveMs: number
  openRestoreIndexMs: number
  openRestoreNotesMs: number
  /** False would mean open rebuilt the index instead of restoring the saved one. */
  snapshotCurrent: boolean
  /** Each part of the read alone (ms, median of the cold runs): which table or saved value costs what. */
  openReadParts: string
  /** What the rows open reads hold, in MB by row and field (the last cold run). */
  openReadMB: string
  /** The steps of the timed open, from inside it (ms, median of the cold runs). */
  openSteps: string
  /** The p50 of each part of a recall, timed alone over the same queries (all cold runs): note index, entity index, assembly. */
  recallParts: string
  /** Over the recalls after the first, of all cold runs. */
  recallP50Ms: number
  recallP95Ms: number
  /**
   * Each cold run's p50 alone, in order. On a kept profile the first run follows the browser's
   * start, whose own start-up work slows every IndexedDB read for some seconds.
   */
  recallP50ByRun: string
  /** The same recalls once more, after the parts were timed: seconds after the open, its filing done or nearly. */
  recallAgainP50Ms: number
  /** From the start of the open until what it left for later was filed, with the recalls in between (median; -1 when a run had not within 2 minutes): a write before then waits for the rest. */
  filedMs: number
  /** In the last cold run, another open left alone: from its end until the notes' texts it left in storage were in. */
  textsInMs: number
  /** And until its filing was done (-1 when not within 2 minutes). */
  idleFiledMs: number
  /** And a write issued right after one more open: it files what that open left for later first. */
  firstWriteMs: number
  /** Entities per timed recall, on average (queries are words of real descriptions). */
  hitsPerRecall: number
  /** Writes of new notes naming known entities, after the recalls of the last cold run. */
  writeP50Ms: number
  writeP95Ms: number
  /** Stored vector bytes one hybrid recall scans (entity and note indexes; 0 for BM25). */
  vectorBytes: number
  /** The fastest tight-loop read of those bytes in the same worker: the floor under recall. */
  floorMs: number
  /** recallP50Ms / floorMs. */
  recallOverFloor: number
  /** After the cold runs, the memory kept in its sync document as the app keeps it: the first time (every note written into a new document), ms. */
  documentFirstMs: number
  /** On a later open, from asking for the document until it was read and reconciled, ms; and the document's stored size, MB. */
  documentStartMs: number
  documentMB: number
  /** That open's open + first recall, before the document is asked for. */
  documentColdOpenMs: number
  /** Recalls made every 50 ms while the document was read: how many, p50 and the slowest, ms; and the longest the worker was busy meanwhile (a recall made then waits that long). */
  recallsDuringDocument: string
  /** The same while the document was made the first time. */
  recallsDuringFirstDocument: string
}

interface Filled { id: string; token: string; entities: number; relationships: number; loadMs: number; saveIndexMs: number }
interface Timings { modelLoadMs: number; openMs: number; openSteps?: Record<string, number>; firstRecallMs: number; firstNoteReadMs?: number; noteReads?: number; noteReadMs?: number; recallMs: number[]; hits: number; embedder: string; phases: { readMs: number; fromRowsMs: number; deriveMs: number; restoreIndexMs: number; restoreNotesMs: number; snapshotCurrent: boolean; readParts?: Record<string, number>; readBytes?: Record<string, number> }; writeMs: number[]; recallParts?: Record<string, number[]>; recallAgainMs?: number[]; filedMs?: number; textsInMs?: number; idleFiledMs?: number; firstWriteMs?: number; floor: { vectorBytes: number; scanMs: number } }

/** Two words of some entity's description, as a person would half-remember it (as in engine.ts). */
function queriesFor(n: number): string[] {
  return Array.from({ length: QUERIES }, (_, q) => {
    const words = (observationFor((q * 7919) % n, n).entities?.[0]?.description ?? '').split(' ')
    return `${words[1]} ${words[4]}`
  })
}

/** Builds `input` (a page of the repository, the benchmark page unless told) with the app's Vite config into a temporary directory. */
export async function buildPage(input = PAGE, reuse: string | null | undefined = process.env.CAIRN_BENCH_DIST, minify = true): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  if (reuse) return { dir: resolve(root, reuse), cleanup: async () => undefined }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-dist-'))
  await build({
    root,
    configFile: join(root, 'vite.config.ts'),
    mode: 'production',
    logLevel: 'warn',
    build: { outDir: dir, emptyOutDir: true, minify, rolldownOptions: { input: join(root, input) } },
  })
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** Serves a build on 127.0.0.1 (any free port unless told). */
export async function serve(dir: string, port = 0): Promise<{ server: PreviewServer; baseUrl: string }> {
  const server = await preview({
    root,
    configFile: join(root, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: dir },
    preview: { host: '127.0.0.1', port, strictPort: true, open: false },
  })
  const baseUrl = server.resolvedUrls?.local[0]
  if (!baseUrl) {
    await server.close()
    throw new Error('the benchmark server did not report a local URL')
  }
  return { server, baseUrl }
}

async function fill(context: BrowserContext, n: number, hybrid: boolean): Promise<Filled> {
  const page = await context.newPage()
  try {
    await page.goto(PAGE)
    await page.waitForSelector('html[data-ready="true"]')
    for (let at = 0; at < n; at += STAGE_CHUNK) {
      const chunk: ObservationInput[] = Array.from({ length: Math.min(STAGE_CHUNK, n - at) }, (_, i) => observationFor(at + i, n))
      await page.evaluate((chunk) => window.cairnBench!.stage(chunk), chunk)
    }
    return await page.evaluate(([name, hybrid]) => window.cairnBench!.fill(name, hybrid), [`bench-${hybrid ? 'hybrid' : 'bm25'}-${n}`, hybrid] as const) as Filled
  } finally {
    await page.close()
  }
}

async function measure(context: BrowserContext, n: number, hybrid: boolean, filled: Filled): Promise<BrowserEngineRow> {
  const page = await context.newPage()
  try {
    await page.goto(PAGE)
    await page.waitForSelector('html[data-ready="true"]')
    // new notes about entities already there, as an agent adds to a memory in use
    const writes: ObservationInput[] = Array.from({ length: WRITES }, (_, i) => ({ ...observationFor(n + i, n), title: `Later observation ${i}` }))
    const runs: Timings[] = []
    for (let r = 0; r < COLD_RUNS; r++) {
      const last = r === COLD_RUNS - 1
      runs.push(await page.evaluate(([id, token, hybrid, queries, writes]) => window.cairnBench!.recall(id, token, hybrid, queries, writes), [filled.id, filled.token, hybrid, queriesFor(n), last ? writes : []] as const) as Timings)
    }
    // the app keeps every open memory in its sync document: its first making, then an open that reads it
    const docArgs = [filled.id, filled.token, hybrid, queriesFor(n)] as const
    const firstDocument = await page.evaluate((a) => window.cairnBench!.syncDocument(...a), docArgs)
    const document = await page.evaluate((a) => window.cairnBench!.syncDocument(...a), docArgs)
    const median = (pick: (t: Timings) => number): number => percentile(runs.map(pick), 50)
    const recallMs = runs.flatMap((t) => t.recallMs)
    const hits = runs.reduce((sum, t) => sum + t.hits, 0)
    const round = (x: number): number => Math.round(x * 10) / 10
    const recallsDuring = (d: typeof document): string => `${d.recallMs.length}, p50 ${round(percentile(d.recallMs, 50))}, max ${round(Math.max(0, ...d.recallMs))}; worker busy at most ${Math.round(d.longestBusyMs)}`
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
      firstNoteReadMs: round(median((t) => t.firstNoteReadMs ?? 0)),
      noteReads: `${runs.at(-1)!.noteReads ?? 0} in ${Math.round(runs.at(-1)!.noteReadMs ?? 0)} ms`,
      coldOpenMs: Math.round(median((t) => t.openMs + t.firstRecallMs)),
      coldRuns: runs.map((t) => `${Math.round(t.openMs + t.firstRecallMs)} (${Object.entries(t.openSteps ?? {}).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}; first recall ${Math.round(t.firstRecallMs)})`).join(' / '),
      openReadMs: Math.round(median((t) => t.phases.readMs)),
      openFromRowsMs: Math.round(median((t) => t.phases.fromRowsMs)),
      openDeriveMs: Math.round(median((t) => t.phases.deriveMs)),
      openRestoreIndexMs: Math.round(median((t) => t.phases.restoreIndexMs)),
      openRestoreNotesMs: Math.round(median((t) => t.phases.restoreNotesMs)),
      snapshotCurrent: runs.every((t) => t.phases.snapshotCurrent),
      openSteps: Object.keys(runs[0]!.openSteps ?? {}).map((k) => `${k} ${Math.round(median((t) => t.openSteps?.[k] ?? 0))}`).join(', '),
      openReadMB: Object.entries(runs.at(-1)!.phases.readBytes ?? {}).map(([k, b]) => `${k} ${(b / 1e6).toFixed(1)}`).join(', '),
      openReadParts: Object.keys(runs[0]!.phases.readParts ?? {}).map((k) => `${k} ${Math.round(median((t) => t.phases.readParts?.[k] ?? 0))}`).join(', '),
      recallParts: Object.keys(runs[0]!.recallParts ?? {}).map((k) => `${k} ${round(percentile(runs.flatMap((t) => t.recallParts?.[k] ?? []), 50))}`).join(', '),
      recallP50Ms: percentile(recallMs, 50),
      recallP95Ms: percentile(recallMs, 95),
      recallP50ByRun: runs.map((t) => round(percentile(t.recallMs, 50))).join(' / '),
      recallAgainP50Ms: percentile(runs.flatMap((t) => t.recallAgainMs ?? []), 50),
      filedMs: runs.some((t) => (t.filedMs ?? -1) < 0) ? -1 : Math.round(median((t) => t.filedMs!)),
      textsInMs: Math.round(runs.at(-1)!.textsInMs ?? -1),
      idleFiledMs: Math.round(runs.at(-1)!.idleFiledMs ?? -1),
      firstWriteMs: round(runs.at(-1)!.firstWriteMs ?? -1),
      hitsPerRecall: round(hits / Math.max(1, recallMs.length)),
      writeP50Ms: percentile(runs.flatMap((t) => t.writeMs), 50),
      writeP95Ms: percentile(runs.flatMap((t) => t.writeMs), 95),
      vectorBytes: runs[0]!.floor.vectorBytes,
      floorMs: Math.round(median((t) => t.floor.scanMs) * 100) / 100,
      recallOverFloor: runs[0]!.floor.vectorBytes ? round(percentile(recallMs, 50) / median((t) => t.floor.scanMs)) : 0,
      documentFirstMs: Math.round(firstDocument.startMs),
      documentStartMs: Math.round(document.startMs),
      documentMB: round(document.documentBytes / 1e6),
      documentColdOpenMs: Math.round(document.coldOpenMs),
      recallsDuringDocument: recallsDuring(document),
      recallsDuringFirstDocument: recallsDuring(firstDocument),
    }
  } finally {
    await page.close()
  }
}

/** Hybrid rows for each size, then a BM25-only row for comparison at the largest size up to 10k (a 100k fill costs minutes). */
export async function benchBrowserEngine(sizes: number[], opts: { bm25?: boolean } = {}): Promise<BrowserEngineRow[]> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`the browser benchmark needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  const { dir, cleanup } = await buildPage()
  const kept = process.env.CAIRN_BENCH_PROFILE ? resolve(process.env.CAIRN_BENCH_PROFILE) : undefined
  const userDataDir = await mkdtemp(join(tmpdir(), 'cairn-bench-profile-'))
  let server: PreviewServer | undefined
  let context: BrowserContext | undefined
  const errors: string[] = []
  const launch = async (profile: string, baseURL: string): Promise<BrowserContext> => {
    const launched = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, baseURL })
    launched.setDefaultTimeout(1_800_000)
    launched.on('weberror', (e) => errors.push(e.error().message))
    return launched
  }
  try {
    const served = await serve(dir, kept ? KEPT_PROFILE_PORT : 0)
    server = served.server
    const largest = Math.max(...sizes.filter((n) => n <= 10_000))
    const wanted: [number, boolean][] = sizes.map((n) => [n, true])
    if (opts.bm25 !== false && Number.isFinite(largest)) wanted.push([largest, false])
    const filled = new Map<string, Filled>()
    const key = (n: number, hybrid: boolean): string => `${hybrid ? 'hybrid' : 'bm25'}-${n}`
    if (kept) {
      // fill what the kept profile lacks, in the profile itself, then time on a copy of it
      const recordOf = (n: number, hybrid: boolean): string => join(kept, `filled-${key(n, hybrid)}.json`)
      for (const [n, hybrid] of wanted) {
        if (existsSync(recordOf(n, hybrid))) {
          filled.set(key(n, hybrid), JSON.parse(await readFile(recordOf(n, hybrid), 'utf8')) as Filled)
          continue
        }
        context = await launch(join(kept, 'profile'), served.baseUrl)
        const made = await fill(context, n, hybrid)
        await context.close()
        context = undefined
        await writeFile(recordOf(n, hybrid), JSON.stringify(made))
        console.error(`browser engine: filled ${key(n, hybrid)} into ${kept}: ${JSON.stringify(made)}`)
        filled.set(key(n, hybrid), made)
      }
      await cp(join(kept, 'profile'), userDataDir, { recursive: true })
    }
    context = await launch(userDataDir, served.baseUrl)
    const rows: BrowserEngineRow[] = []
    // each row is logged as it comes: a 100k row takes minutes
    const add = (row: BrowserEngineRow) => (rows.push(row), console.error(`browser engine: ${JSON.stringify(row)}`))
    for (const [n, hybrid] of wanted) add(await measure(context, n, hybrid, filled.get(key(n, hybrid)) ?? (await fill(context, n, hybrid))))
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
  // --hybrid leaves out the BM25 comparison row
  const rows = await benchBrowserEngine(sizes.length ? sizes : [1_000, 10_000], { bm25: !process.argv.includes('--hybrid') })
  console.log('\nEngine in headless Chromium (module worker, real IndexedDB, cairn-glove-100d on onnxruntime-web wasm)')
  console.table(rows)
  console.log(JSON.stringify(rows, null, 2))
}
