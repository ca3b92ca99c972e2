// The graph view benchmark page: `window.cairnGraphBench.run` generates a graph in the page,
// draws it with the app's scene (sigma on WebGL), moves the camera every frame for a while and
// returns the time between animation frames.
import { mountScene, webglAvailable, type SceneEdge, type SceneNode } from '../../../src/app/graph/scene'

export interface GraphBenchResult {
  nodes: number
  edges: number
  layoutMs: number
  /** Time from data to the first drawn frame, layout included. */
  firstFrameMs: number
  frameMs: number[]
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
  const nodes = degree.map((d, i) => ({ key: `e${i}`, name: `Entity ${i}`, degree: d, hops: i % 4 }))
  return { nodes, edges }
}

function nextFrame(): Promise<number> {
  return new Promise((resolve) => requestAnimationFrame(resolve))
}

async function run(n: number, edgesPerNode: number, animateMs: number): Promise<GraphBenchResult> {
  if (!webglAvailable()) throw new Error('WebGL is unavailable in this browser')
  const { nodes, edges } = generate(n, edgesPerNode)
  const t0 = performance.now()
  const scene = mountScene(document.getElementById('graph')!, nodes, edges)
  await nextFrame()
  const firstFrameMs = performance.now() - t0
  const camera = scene.sigma.getCamera()
  const frameMs: number[] = []
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
  const result = { nodes: scene.nodes, edges: scene.edges, layoutMs: scene.layoutMs, firstFrameMs, frameMs }
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
