// The built app in headless Chromium: how much JavaScript the first screen costs and how soon
// it is interactive, cold (empty profile, everything from the network) and warm (a reload the
// service worker answers from its precache). `vite build` into a temp dir, `vite preview` on
// 127.0.0.1, Debian Chromium. Alone: `npx tsx test/bench/app-alone.ts [runs]`.
//
// Interactive = navigation start until the memory list reports `data-loaded="true"`: the shell
// is mounted, the capture/create form is on screen and the engine worker has answered
// listMemories (so the worker's first script has loaded and run and has read the registry from
// IndexedDB; the rest of the engine loads after).
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import { percentile } from './stats'

const root = fileURLToPath(new URL('../..', import.meta.url))
// The flags of test/e2e/harness.ts, which cannot be imported outside vitest (it uses inject).
const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
const READY = '[data-testid="memory-list"][data-loaded="true"]'
/** The goal of the issue for JavaScript on first load, gzip, models and wasm excluded. */
export const FIRST_LOAD_GOAL_BYTES = 250_000

/** Files that are the embedding runtime or model, not the app: reported, never counted. */
const isModelOrRuntime = (path: string): boolean => path.startsWith('/models/') || path.startsWith('/ort/') || path.endsWith('.wasm') || path.endsWith('.onnx')
/** The service worker's own scripts: fetched by its registration, in the background. */
const isServiceWorkerScript = (path: string): boolean => path === '/sw.js' || /^\/workbox-[\w-]+\.js$/.test(path)
const isScript = (path: string): boolean => path.endsWith('.js') || path.endsWith('.mjs')

export interface ChunkSize {
  path: string
  rawBytes: number
  gzipBytes: number
}

export interface AppBench {
  /** Scripts the page and its workers fetched before interactive, service worker excluded. */
  firstLoad: { rawBytes: number; gzipBytes: number; goalGzipBytes: number; withinGoal: boolean; scripts: ChunkSize[] }
  /** sw.js and its workbox runtime: installed after the first screen, needed for offline only. */
  serviceWorkerScripts: ChunkSize[]
  /** Built scripts not fetched before interactive: loaded when a screen or the model needs them. */
  lazyScripts: ChunkSize[]
  /** Not counted: the embedding model and the onnxruntime wasm build (fetched by the precache). */
  excluded: ChunkSize[]
  /** Every built script, biggest first. */
  biggestChunks: ChunkSize[]
  coldMs: { runs: number[]; median: number }
  warmMs: { runs: number[]; median: number }
  /** The document and every script of each warm load came from the service worker. */
  warmFromServiceWorker: boolean
  note: string
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await walk(full)))
    else out.push(full)
  }
  return out
}

async function sizeOf(distDir: string, path: string): Promise<ChunkSize> {
  const bytes = await readFile(join(distDir, path))
  // gzip -9 of each file on its own, as a server compressing each response would send it
  return { path, rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length }
}

const sum = (xs: ChunkSize[], key: 'rawBytes' | 'gzipBytes'): number => xs.reduce((a, x) => a + x[key], 0)
const median = (xs: number[]): number => Math.round(percentile(xs, 50))

/**
 * Stamps the moment the ready marker appears, so the figure does not depend on polling. A string,
 * because a function would be sent as its transpiled source, helpers the page lacks included.
 */
const STAMP_READY = `(() => {
  const check = () => {
    if (window.__cairnReadyAt === undefined && document.querySelector('${READY.replace(/'/g, "\\'")}')) window.__cairnReadyAt = performance.now()
  }
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-loaded'] })
})()`

interface Load {
  ms: number
  /** Paths of scripts requested before interactive. */
  scripts: Set<string>
  /** The document and every script were answered by the service worker (and there were some). */
  fromServiceWorker: boolean
}

/** Loads the app in `page` (goto or reload) and returns time to interactive and what it fetched. */
async function load(context: BrowserContext, page: Page, origin: string, how: 'goto' | 'reload'): Promise<Load> {
  const scripts = new Set<string>()
  let ready = false
  let checked = 0
  let fromSw = 0
  const onResponse = (response: import('playwright-core').Response): void => {
    const url = new URL(response.url())
    if (url.origin !== origin || ready) return
    const path = url.pathname
    if (path === '/' || path === '/index.html' || isScript(path)) {
      if (isScript(path)) scripts.add(path)
      if (isServiceWorkerScript(path)) return
      checked++
      if (response.fromServiceWorker()) fromSw++
    }
  }
  context.on('response', onResponse)
  try {
    if (how === 'goto') await page.goto(origin)
    else await page.reload()
    await page.waitForSelector(READY, { state: 'attached', timeout: 60_000 })
    ready = true
    const ms = (await page.evaluate('window.__cairnReadyAt ?? performance.now()')) as number
    return { ms, scripts, fromServiceWorker: checked > 0 && fromSw === checked }
  } finally {
    context.off('response', onResponse)
  }
}

async function launch(): Promise<{ context: BrowserContext; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-app-profile-'))
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1024, height: 720 } })
  await context.addInitScript({ content: STAMP_READY })
  return { context, dir }
}

export async function benchApp(runs = 3): Promise<AppBench> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`the app benchmark needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  const distDir = await mkdtemp(join(tmpdir(), 'cairn-bench-app-'))
  let server: PreviewServer | undefined
  const profiles: string[] = []
  try {
    await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: distDir, emptyOutDir: true } })
    server = await preview({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn', build: { outDir: distDir }, preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false } })
    const baseUrl = server.resolvedUrls?.local[0]
    if (!baseUrl) throw new Error('the benchmark server did not report a local URL')
    const origin = new URL(baseUrl).origin

    const cold: number[] = []
    const warm: number[] = []
    let warmFromSw = true
    const fetched = new Set<string>()
    for (let i = 0; i < runs; i++) {
      const { context, dir } = await launch()
      profiles.push(dir)
      try {
        const errors: string[] = []
        context.on('weberror', (e) => errors.push(e.error().message))
        const page = await context.newPage()
        const first = await load(context, page, origin, 'goto')
        cold.push(first.ms)
        for (const s of first.scripts) fetched.add(s)
        // the precache install downloads the model and runtime (~20 MB) before it takes control
        await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 60_000 })
        const again = await load(context, page, origin, 'reload')
        warm.push(again.ms)
        warmFromSw &&= again.fromServiceWorker
        if (errors.length) throw new Error(`the app reported errors: ${errors.join('; ')}`)
      } finally {
        await context.close().catch(() => undefined)
      }
    }

    const builtScripts = (await walk(distDir)).map((f) => `/${relative(distDir, f)}`).filter(isScript)
    const all = await Promise.all(builtScripts.map((p) => sizeOf(distDir, p)))
    const excluded = await Promise.all((await walk(distDir)).map((f) => `/${relative(distDir, f)}`).filter(isModelOrRuntime).map((p) => sizeOf(distDir, p)))
    const counted = all.filter((c) => fetched.has(c.path) && !isServiceWorkerScript(c.path) && !isModelOrRuntime(c.path))
    const unknown = [...fetched].filter((p) => !builtScripts.includes(p))
    if (unknown.length) throw new Error(`scripts fetched that are not in the build: ${unknown.join(', ')}`)
    const gzip = sum(counted, 'gzipBytes')
    const bySize = (a: ChunkSize, b: ChunkSize): number => b.gzipBytes - a.gzipBytes
    return {
      firstLoad: { rawBytes: sum(counted, 'rawBytes'), gzipBytes: gzip, goalGzipBytes: FIRST_LOAD_GOAL_BYTES, withinGoal: gzip <= FIRST_LOAD_GOAL_BYTES, scripts: counted.sort(bySize) },
      serviceWorkerScripts: all.filter((c) => isServiceWorkerScript(c.path)).sort(bySize),
      lazyScripts: all.filter((c) => !fetched.has(c.path) && !isServiceWorkerScript(c.path) && !isModelOrRuntime(c.path)).sort(bySize),
      excluded: excluded.sort(bySize),
      biggestChunks: [...all].sort(bySize).slice(0, 8),
      coldMs: { runs: cold.map(Math.round), median: median(cold) },
      warmMs: { runs: warm.map(Math.round), median: median(warm) },
      warmFromServiceWorker: warmFromSw,
      note: 'interactive = navigation start to the memory list answered by the engine worker; empty profile; headless Chromium on this machine, served from 127.0.0.1 (no network latency)',
    }
  } finally {
    await server?.close().catch(() => undefined)
    await Promise.all([distDir, ...profiles].map((d) => rm(d, { recursive: true, force: true })))
  }
}

const kB = (b: number): string => (b / 1000).toFixed(1)

/** Console tables for `benchApp`'s result. */
export function printAppBench(r: AppBench): void {
  const rows = (xs: ChunkSize[]): Array<Record<string, string>> => xs.map((c) => ({ file: c.path, 'raw kB': kB(c.rawBytes), 'gzip kB': kB(c.gzipBytes) }))
  console.log(`\nJS on first load (page + engine worker, before interactive; gzip -9 per file): ${kB(r.firstLoad.gzipBytes)} kB gzip, ${kB(r.firstLoad.rawBytes)} kB raw; goal ${kB(r.firstLoad.goalGzipBytes)} kB: ${r.firstLoad.withinGoal ? 'met' : 'MISSED'}`)
  console.table(rows(r.firstLoad.scripts))
  console.log('Loaded later (a screen or the model needs them):')
  console.table(rows(r.lazyScripts))
  console.log('Service worker scripts (installed after the first screen, for offline use):')
  console.table(rows(r.serviceWorkerScripts))
  console.log('Not counted (embedding model and onnxruntime wasm build; precached in the background):')
  console.table(rows(r.excluded))
  console.log(`\nTime to interactive (${r.note})`)
  console.table([
    { load: 'cold (empty profile, network)', 'median ms': r.coldMs.median, runs: r.coldMs.runs.join(', ') },
    { load: `warm (reload${r.warmFromServiceWorker ? ', every script from the service worker' : ', NOT all from the service worker'})`, 'median ms': r.warmMs.median, runs: r.warmMs.runs.join(', ') },
  ])
}
