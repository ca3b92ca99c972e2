// Graph view benchmark in headless Chromium (--disable-gpu, so WebGL runs on SwiftShader):
// builds test/bench/graph-page/ with the app's Vite config, draws 5,000 nodes and about
// 10,000 edges with the app's scene, moves the camera every frame for 3 s and reports the
// time between animation frames. Alone: `npx tsx test/bench/graph-view.ts [nodes]`.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import type { GraphBenchResult } from './graph-page/page'
import { percentile } from './stats'

const root = fileURLToPath(new URL('../..', import.meta.url))
const PAGE = 'test/bench/graph-page/index.html'
const ANIMATE_MS = 3_000
// The flags of test/e2e/harness.ts, which cannot be imported outside vitest (it uses inject).
const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

export interface GraphViewBench {
  nodes: number
  edges: number
  /** Between animation frames while the camera moves; 16.7 is 60 frames a second. */
  frameMsP50: number
  frameMsP95: number
  frames: number
  /** ForceAtlas2 on the main thread, before the first frame. */
  layoutMs: number
  /** Data in hand to first drawn frame: graph build, layout, WebGL setup. */
  firstFrameMs: number
}

export async function benchGraphView(nodes = 5_000, edgesPerNode = 2): Promise<GraphViewBench> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`the graph view benchmark needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-graph-'))
  let server: PreviewServer | undefined
  let browser: Browser | undefined
  try {
    await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: dir, emptyOutDir: true, rolldownOptions: { input: join(root, PAGE) } } })
    server = await preview({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn', build: { outDir: dir }, preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false } })
    const baseUrl = server.resolvedUrls?.local[0]
    if (!baseUrl) throw new Error('the benchmark server did not report a local URL')
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(new URL(PAGE, baseUrl).href)
    await page.waitForSelector('html[data-ready="true"]')
    const r = (await page.evaluate(([n, k, ms]) => window.cairnGraphBench!.run(n, k, ms), [nodes, edgesPerNode, ANIMATE_MS] as const)) as GraphBenchResult
    if (errors.length) throw new Error(`the benchmark page reported errors: ${errors.join('; ')}`)
    if (r.frameMs.length < 2) throw new Error(`only ${r.frameMs.length} frames in ${ANIMATE_MS} ms: the page did not animate`)
    const round = (x: number): number => Math.round(x * 10) / 10
    return {
      nodes: r.nodes,
      edges: r.edges,
      frameMsP50: round(percentile(r.frameMs, 50)),
      frameMsP95: round(percentile(r.frameMs, 95)),
      frames: r.frameMs.length,
      layoutMs: Math.round(r.layoutMs),
      firstFrameMs: Math.round(r.firstFrameMs),
    }
  } finally {
    await browser?.close().catch(() => undefined)
    await server?.close().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2]) || 5_000
  const result = await benchGraphView(n)
  console.log(`\nGraph view in headless Chromium (sigma on WebGL via SwiftShader, --disable-gpu), camera moving for ${ANIMATE_MS / 1000} s`)
  console.table([result])
  console.log(JSON.stringify(result, null, 2))
}
