// Draws a graph slice with sigma on WebGL: canvas and SVG renderers stall at thousands of
// nodes, WebGL stays fluid. Labels are drawn by sigma on its canvas, so names are never HTML.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'
import Sigma from 'sigma'

export interface SceneNode {
  key: string
  name: string
  degree: number
  hops: number
}
export interface SceneEdge {
  key: string
  source: string
  target: string
}

export interface Scene {
  sigma: Sigma
  graph: Graph
  nodes: number
  edges: number
  layoutMs: number
  kill(): void
}

/** Whether this browser can give sigma a WebGL context (headless Chromium does via SwiftShader). */
export function webglAvailable(): boolean {
  try {
    const c = document.createElement('canvas')
    return !!(c.getContext('webgl2') ?? c.getContext('webgl'))
  } catch {
    return false
  }
}

const RING_COLORS = ['#c2410c', '#2563eb', '#0d9488', '#7c3aed', '#64748b']

/** Layout iterations shrink as the graph grows, so the first frame stays within about a second. */
function iterationsFor(n: number): number {
  if (n <= 200) return 200
  if (n <= 1000) return 80
  return 30
}

export function buildGraph(nodes: readonly SceneNode[], edges: readonly SceneEdge[]): { graph: Graph; layoutMs: number } {
  const graph = new Graph({ type: 'directed', multi: false, allowSelfLoops: false })
  const n = nodes.length
  // golden-angle spiral: a deterministic, already well-spread start, so few layout passes suffice
  nodes.forEach((node, i) => {
    const r = Math.sqrt(i + 0.5)
    const a = i * 2.399963
    graph.addNode(node.key, {
      x: r * Math.cos(a), y: r * Math.sin(a),
      label: node.name,
      size: 4 + Math.min(12, Math.sqrt(node.degree) * 2),
      color: RING_COLORS[Math.min(node.hops, RING_COLORS.length - 1)],
    })
  })
  for (const e of edges) {
    if (graph.hasNode(e.source) && graph.hasNode(e.target) && !graph.hasEdge(e.source, e.target)) graph.addDirectedEdgeWithKey(e.key, e.source, e.target, { size: 1, color: '#cbd5e1' })
  }
  const t0 = performance.now()
  if (n > 1) forceAtlas2.assign(graph, { iterations: iterationsFor(n), settings: { ...forceAtlas2.inferSettings(graph), barnesHutOptimize: n > 300 } })
  return { graph, layoutMs: performance.now() - t0 }
}

export function mountScene(container: HTMLElement, nodes: readonly SceneNode[], edges: readonly SceneEdge[], onPick?: (key: string, name: string) => void): Scene {
  const { graph, layoutMs } = buildGraph(nodes, edges)
  const sigma = new Sigma(graph, container, {
    renderEdgeLabels: false,
    // every name while the graph is small; in a large one only nodes drawn big enough to read
    labelRenderedSizeThreshold: graph.order <= 300 ? 0 : 8,
    defaultEdgeType: 'line',
  })
  if (onPick) sigma.on('clickNode', ({ node }) => onPick(node, String(graph.getNodeAttribute(node, 'label'))))
  return { sigma, graph, nodes: graph.order, edges: graph.size, layoutMs, kill: () => sigma.kill() }
}
