// The graph view benchmark page: `window.cairnGraphBench.run` generates a graph in the page,
// draws it with sigma on WebGL and returns the time between animation frames while the camera
// moves. `scene: 'app'` is the app's scene (src/app/graph/scene.ts); `scene: 'baseline'` is the
// earlier one kept for comparison: 30 ForceAtlas2 passes on the main thread before the first
// frame, and edges and names drawn during every camera move.
import Sigma from 'sigma'
import { buildGraph, killRenderer, layoutNow, mountScene, webglAvailable, type LayoutRun, type SceneEdge, type SceneNode } from '../../../src/app/graph/scene'

export type BenchScene = 'app' | 'baseline'

export interface GraphBenchResult {
  scene: BenchScene
  nodes: number
  edges: number
  /** ForceAtlas2 on the main thread before the first frame. */
  layoutMs: number
  /** The whole layout: passes, duration from mount, and where it ran. */
  layout: LayoutRun
  /** Time from data to the first drawn frame, main-thread layout included. */
  firstFrameMs: number
  /** Between frames while a worker layout is still settling (empty when it ran before the first frame). */
  settlingFrameMs: number[]
  /** Between frames while the camera is set from script: every frame draws nodes, edges and names. */
  frameMs: number[]
  /** Between frames while a mouse drag pans the view, as a person does: sigma's moving mode. */
  dragFrameMs: number[]
  /** sigma's own render() per frame while the camera is set from script, on the main thread: JS and WebGL calls issued, not the raster that follows. */
  renderJsMs: number[]
}

/** Small deterministic generator, so every run draws the same graph. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Each new node links to two earlier ones, picked towards the well-linked: hubs, like a memory has. */
function generate(n: number, edgesPerNode: number): { nodes: SceneNode[]; edges: SceneEdge[] } {
  const rand = rng(42)
  const degree = new Array<number>(n).fill(0)
  const ends: number[] = []
  const seen = new Set<string>()
  const edges: SceneEdge[] = []
  for (let i = 1; i < n; i++) {
    for (let k = 0; k < Math.min(edgesPerNode, i); k++) {
      const j = ends.length && rand() < 0.5 ? ends[Math.floor(rand() * ends.length)]! : Math.floor(rand() * i)
      const key = `${i}>${j}`
      if (j === i || seen.has(key)) continue
      seen.add(key)
      edges.push({ key, source: `e${i}`, target: `e${j}` })
      degree[i]!++
      degree[j]!++
      ends.push(i, j)
    }
  }
  const kinds = ['person', 'organization', 'place', 'project', 'event']
  const nodes = degree.map((d, i) => ({ key: `e${i}`, name: `Entity ${i}`, type: kinds[i % kinds.length]!, degree: d, hops: i % 4 }))
  return { nodes, edges }
}

function nextFrame(): Promise<number> {
  return new Promise((resolve) => requestAnimationFrame(resolve))
}

/** The scene as it was before the worker layout and the hide-on-move settings. */
function mountBaseline(container: HTMLElement, nodes: SceneNode[], edges: SceneEdge[]): { sigma: Sigma; nodes: number; edges: number; layoutMs: number; layoutDone: Promise<LayoutRun>; kill(): void } {
  const graph = buildGraph(nodes, edges)
  const layoutMs = layoutNow(graph, 30)
  const sigma = new Sigma(graph, container, { renderEdgeLabels: false, labelRenderedSizeThreshold: 8, defaultEdgeType: 'line' })
  return { sigma, nodes: graph.order, edges: graph.size, layoutMs, layoutDone: Promise.resolve({ iterations: 30, ms: layoutMs, where: 'main thread' }), kill: () => killRenderer(sigma) }
}

/** Frame gaps until `done` settles or `ms` pass. */
async function framesUntil(done: Promise<unknown>, ms: number): Promise<number[]> {
  let settled = false
  void done.then(() => (settled = true))
  const out: number[] = []
  let last = await nextFrame()
  const start = last
  while (!settled && last - start < ms) {
    const now = await nextFrame()
    out.push(now - last)
    last = now
  }
  return out
}

/** Drags the view in a circle with mouse events on sigma's mouse layer, one move a frame. */
async function drag(container: HTMLElement, ms: number): Promise<number[]> {
  const layer = container.querySelector<HTMLCanvasElement>('canvas.sigma-mouse') ?? container.lastElementChild!
  const box = layer.getBoundingClientRect()
  const cx = box.left + box.width / 2
  const cy = box.top + box.height / 2
  const at = (x: number, y: number, type: string): void => void layer.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, button: 0, buttons: type === 'mouseup' ? 0 : 1, bubbles: true, cancelable: true }))
  at(cx, cy, 'mousedown')
  const out: number[] = []
  let last = await nextFrame()
  const start = last
  while (last - start < ms) {
    const t = (last - start) / 1000
    at(cx + 150 * Math.sin(t * 2), cy + 150 * (1 - Math.cos(t * 2)), 'mousemove')
    const now = await nextFrame()
    out.push(now - last)
    last = now
  }
  at(cx, cy, 'mouseup')
  return out
}

async function run(n: number, edgesPerNode: number, animateMs: number, which: BenchScene = 'app'): Promise<GraphBenchResult> {
  if (!webglAvailable()) throw new Error('WebGL is unavailable in this browser')
  const container = document.getElementById('graph')!
  const { nodes, edges } = generate(n, edgesPerNode)
  const t0 = performance.now()
  const scene = which === 'app' ? mountScene(container, nodes, edges) : mountBaseline(container, nodes, edges)
  await nextFrame()
  const firstFrameMs = performance.now() - t0
  const sigma = scene.sigma as unknown as { render(): unknown }
  const renderJsMs: number[] = []
  const render = sigma.render.bind(sigma)
  sigma.render = () => {
    const t = performance.now()
    const out = render()
    renderJsMs.push(performance.now() - t)
    return out
  }
  // a worker layout keeps moving nodes for a while; the camera figures are for a still graph
  const settlingFrameMs = await framesUntil(scene.layoutDone, 60_000)
  const layout = await scene.layoutDone
  await nextFrame()
  const camera = scene.sigma.getCamera()
  const frameMs: number[] = []
  renderJsMs.length = 0
  let last = await nextFrame()
  const start = last
  // pan in a circle while zooming in and out, so every frame redraws all nodes and edges
  while (last - start < animateMs) {
    const t = (last - start) / 1000
    camera.setState({ x: 0.5 + 0.2 * Math.cos(t * 2), y: 0.5 + 0.2 * Math.sin(t * 2), ratio: 0.6 + 0.4 * Math.sin(t * 3), angle: t * 0.3 })
    const now = await nextFrame()
    frameMs.push(now - last)
    last = now
  }
  const cameraRenderJsMs = [...renderJsMs]
  camera.setState({ x: 0.5, y: 0.5, ratio: 0.8, angle: 0 })
  await nextFrame()
  const dragFrameMs = await drag(container, animateMs)
  const result = { scene: which, nodes: scene.nodes, edges: scene.edges, layoutMs: scene.layoutMs, layout, firstFrameMs, settlingFrameMs, frameMs, dragFrameMs, renderJsMs: cameraRenderJsMs }
  scene.kill()
  return result
}

const api = { run }

declare global {
  interface Window {
    cairnGraphBench?: typeof api
  }
}

window.cairnGraphBench = api
document.documentElement.dataset.ready = 'true'
