// Graph view benchmark in headless Chromium (--disable-gpu, so WebGL runs on SwiftShader):
// builds test/bench/graph-page/ with the app's Vite config, draws 5,000 nodes and about
// 10,000 edges, and reports the time between animation frames while the layout settles,
// while the camera is moved from script (a full redraw each frame) and while a mouse drag
// pans the view. Both the app's scene and the earlier baseline run, each in a fresh tab.
// Alone: `npx tsx test/bench/graph-view.ts [nodes]`.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import type { BenchScene, GraphBenchResult } from './graph-page/page'
import { percentile } from './stats'

const root = fileURLToPath(new URL('../..', import.meta.url))
const PAGE = 'test/bench/graph-page/index.html'
const ANIMATE_MS = 3_000
// The flags of test/e2e/harness.ts, which cannot be imported outside vitest (it uses inject).
const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

export interface GraphViewBench {
  /** 'app': src/app/graph/scene.ts; 'baseline': main-thread layout, everything drawn while moving. */
  scene: BenchScene
  nodes: number
  edges: number
  /** Camera set from script each frame: nodes, edges and names drawn; 16.7 is 60 frames a second. */
  frameMsP50: number
  frameMsP95: number
  frames: number
  /** A mouse drag panning the view (the app hides edges and names until the drag stops). */
  dragFrameMsP50: number
  dragFrameMsP95: number
  /** sigma's render() on the main thread per frame (camera from script); the rest of a frame is raster. */
  renderJsMsP50: number
  /** ForceAtlas2 on the main thread, before the first frame. */
  layoutMs: number
  /** Data in hand to first drawn frame: graph build, main-thread layout, WebGL setup. */
  firstFrameMs: number
  layoutIterations: number
  layoutWhere: string
  /** Mount until the layout stopped. */
  layoutTotalMs: number
  /** Between frames while the worker layout settles (0 when it ran before the first frame). */
  settlingFrameMsP50: number
}

export async function benchGraphView(nodes = 5_000, edgesPerNode = 2, scenes: BenchScene[] = ['baseline', 'app']): Promise<GraphViewBench[]> {
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
    const round = (x: number): number => Math.round(x * 10) / 10
    const out: GraphViewBench[] = []
    for (const scene of scenes) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(e.message))
      await page.goto(new URL(PAGE, baseUrl).href)
      await page.waitForSelector('html[data-ready="true"]')
      const r = (await page.evaluate(([n, k, ms, which]) => window.cairnGraphBench!.run(n, k, ms, which), [nodes, edgesPerNode, ANIMATE_MS, scene] as const)) as GraphBenchResult
      await page.close()
      if (errors.length) throw new Error(`the benchmark page reported errors: ${errors.join('; ')}`)
      if (scene === 'app' && r.layout.where === 'worker' && r.layout.iterations === 0) throw new Error('the layout worker applied no ForceAtlas2 pass')
      if (r.frameMs.length < 2 || r.dragFrameMs.length < 2) throw new Error(`only ${r.frameMs.length} and ${r.dragFrameMs.length} frames in ${ANIMATE_MS} ms: the page did not animate`)
      out.push({
        scene: r.scene,
        nodes: r.nodes,
        edges: r.edges,
        frameMsP50: round(percentile(r.frameMs, 50)),
        frameMsP95: round(percentile(r.frameMs, 95)),
        frames: r.frameMs.length,
        dragFrameMsP50: round(percentile(r.dragFrameMs, 50)),
        dragFrameMsP95: round(percentile(r.dragFrameMs, 95)),
        renderJsMsP50: round(percentile(r.renderJsMs, 50)),
        layoutMs: Math.round(r.layoutMs),
        firstFrameMs: Math.round(r.firstFrameMs),
        layoutIterations: r.layout.iterations,
        layoutWhere: r.layout.where,
        layoutTotalMs: Math.round(r.layout.ms),
        settlingFrameMsP50: round(percentile(r.settlingFrameMs, 50)),
      })
    }
    return out
  } finally {
    await browser?.close().catch(() => undefined)
    await server?.close().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2]) || 5_000
  const result = await benchGraphView(n)
  console.log(`\nGraph view in headless Chromium (sigma on WebGL via SwiftShader, --disable-gpu): ${ANIMATE_MS / 1000} s of camera moves from script, then ${ANIMATE_MS / 1000} s of mouse drag`)
  console.table(result)
  console.log(JSON.stringify(result, null, 2))
}
