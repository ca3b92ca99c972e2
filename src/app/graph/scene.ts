// Draws a graph slice with sigma on WebGL: canvas and SVG renderers stall at thousands of
// nodes, WebGL stays fluid. Labels are drawn by sigma on its canvas, so names are never HTML.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'
import Sigma from 'sigma'
import { RING_COLORS } from './colors'
import type { LayoutReply, LayoutRequest } from './layout-protocol'
import { typeLabel } from '../parts/labels'

export { webglAvailable } from './webgl'

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
  /** The relationship's type, drawn on the edge on hover and when zoomed in. */
  type?: string
}

export interface LayoutRun {
  /** ForceAtlas2 passes applied to the drawn positions. */
  iterations: number
  /** From mount until the layout stopped. */
  ms: number
  where: 'main thread' | 'worker'
}

export interface Scene {
  sigma: Sigma
  graph: Graph
  nodes: number
  edges: number
  /** Layout time on the main thread before the first frame (0 when the layout runs in a worker). */
  layoutMs: number
  /** Settles when the layout has stopped, or at once when it ran before the first frame. */
  layoutDone: Promise<LayoutRun>
  kill(): void
}

/** Below this camera ratio (zoomed in) every visible edge shows its relationship type. */
const EDGE_LABELS_BELOW_RATIO = 0.45

/** Up to this size the layout runs before the first frame: a few milliseconds, and no motion. */
const SYNC_LAYOUT_MAX_NODES = 300
const SYNC_LAYOUT_ITERATIONS = 200
/** Above this many relationships, edges and labels are left out while the camera moves. */
const HIDE_ON_MOVE_MIN_EDGES = 1_000
/** A larger graph settles in a worker for at most this many passes or this long, then stays still. */
const WORKER_LAYOUT_ITERATIONS = 100
const WORKER_LAYOUT_MAX_MS = 3_000
const WORKER_LAYOUT_PROGRESS_MS = 750

function settingsFor(graph: Graph): ReturnType<typeof forceAtlas2.inferSettings> {
  return { ...forceAtlas2.inferSettings(graph), barnesHutOptimize: graph.order > SYNC_LAYOUT_MAX_NODES }
}

/** The graph at its starting positions: a golden-angle spiral, deterministic and already well spread. */
export function buildGraph(nodes: readonly SceneNode[], edges: readonly SceneEdge[]): Graph {
  const graph = new Graph({ type: 'directed', multi: false, allowSelfLoops: false })
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
    if (graph.hasNode(e.source) && graph.hasNode(e.target) && !graph.hasEdge(e.source, e.target)) graph.addDirectedEdgeWithKey(e.key, e.source, e.target, { size: 1, color: '#cbd5e1', relType: typeLabel(e.type ?? '') })
  }
  return graph
}

/** ForceAtlas2 on the calling thread; returns the milliseconds it took. */
export function layoutNow(graph: Graph, iterations: number): number {
  const t0 = performance.now()
  if (graph.order > 1) forceAtlas2.assign(graph, { iterations, settings: settingsFor(graph) })
  return performance.now() - t0
}

/**
 * ForceAtlas2 in a Web Worker, so the page keeps answering while a large graph settles. The
 * worker sends positions in a few batches, so sigma redraws a handful of times rather than
 * after every pass, and stops after a bounded number of passes or time.
 */
function layoutInWorker(graph: Graph): { done: Promise<LayoutRun>; stop(): void } {
  const t0 = performance.now()
  const keys = graph.nodes()
  const index = new Map(keys.map((k, i) => [k, i]))
  const positions = new Float32Array(2 * keys.length)
  keys.forEach((k, i) => {
    positions[2 * i] = graph.getNodeAttribute(k, 'x') as number
    positions[2 * i + 1] = graph.getNodeAttribute(k, 'y') as number
  })
  const edges = new Uint32Array(2 * graph.size)
  let j = 0
  graph.forEachEdge((_e, _a, source, target) => {
    edges[j++] = index.get(source)!
    edges[j++] = index.get(target)!
  })
  const worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module', name: 'cairn-graph-layout' })
  let stopped = false
  let iterations = 0
  let finish: (run: LayoutRun) => void = () => undefined
  const done = new Promise<LayoutRun>((resolve) => (finish = resolve))
  const stop = (): void => {
    if (stopped) return
    stopped = true
    worker.terminate()
    finish({ iterations, ms: performance.now() - t0, where: 'worker' })
  }
  worker.onmessage = ({ data }: MessageEvent<LayoutReply>) => {
    if (stopped) return
    iterations = data.iterations
    const p = data.positions
    graph.updateEachNodeAttributes((key, attr) => {
      const i = index.get(key)!
      attr.x = p[2 * i]
      attr.y = p[2 * i + 1]
      return attr
    }, { attributes: ['x', 'y'] })
    if (data.final) stop()
  }
  // without the layout the graph still shows, at its starting positions
  worker.onerror = (event) => {
    event.preventDefault()
    stop()
  }
  const request: LayoutRequest = { positions, edges, iterations: WORKER_LAYOUT_ITERATIONS, maxMs: WORKER_LAYOUT_MAX_MS, progressMs: WORKER_LAYOUT_PROGRESS_MS }
  worker.postMessage(request, [positions.buffer, edges.buffer])
  return { done, stop }
}

/**
 * Kills a renderer for good. After a drag is released, sigma's mouse captor refreshes the
 * renderer from a timeout (when edges hide while moving), and its kill does not clear that
 * timeout; a refresh of a killed renderer throws, so the late one is made to do nothing.
 */
export function killRenderer(sigma: Sigma): void {
  sigma.kill()
  sigma.refresh = (() => sigma) as Sigma['refresh']
}

export function mountScene(container: HTMLElement, nodes: readonly SceneNode[], edges: readonly SceneEdge[], onPick?: (key: string, name: string) => void): Scene {
  const graph = buildGraph(nodes, edges)
  const small = graph.order <= SYNC_LAYOUT_MAX_NODES
  const layoutMs = small ? layoutNow(graph, SYNC_LAYOUT_ITERATIONS) : 0
  const large = graph.size > HIDE_ON_MOVE_MIN_EDGES
  let hovered: string | null = null
  // the reducer runs during the first render, before the constructor has returned
  let renderer: Sigma | undefined
  const sigma: Sigma = new Sigma(graph, container, {
    // an edge carries its type as a label only around the hovered entity or when zoomed in (the reducer below)
    renderEdgeLabels: true,
    edgeLabelSize: 12,
    edgeLabelColor: { color: '#334155' },
    // names compete for room on a grid, so they do not pile on each other
    labelDensity: 0.6,
    labelGridCellSize: 110,
    labelRenderedSizeThreshold: small ? 0 : 8,
    edgeReducer: (edge, data) => {
      const near = hovered !== null && (graph.source(edge) === hovered || graph.target(edge) === hovered)
      const zoomed = (renderer?.getCamera().ratio ?? 1) < EDGE_LABELS_BELOW_RATIO
      return { ...data, label: near || zoomed ? (data.relType as string) : '', ...(near ? { color: '#475569', size: 2, forceLabel: true } : {}) }
    },
    defaultEdgeType: 'line',
    // a pan or zoom of a large graph redraws the nodes only, the edges and names come back when it stops
    hideEdgesOnMove: large,
    hideLabelsOnMove: large,
  })
  renderer = sigma
  const hover = (node: string | null): void => {
    hovered = node
    sigma.refresh({ skipIndexation: true })
  }
  sigma.on('enterNode', ({ node }) => hover(node))
  sigma.on('leaveNode', () => hover(null))
  if (onPick) sigma.on('clickNode', ({ node }) => onPick(node, String(graph.getNodeAttribute(node, 'label'))))
  const worker = small ? undefined : layoutInWorker(graph)
  const layoutDone = worker?.done ?? Promise.resolve<LayoutRun>({ iterations: graph.order > 1 ? SYNC_LAYOUT_ITERATIONS : 0, ms: layoutMs, where: 'main thread' })
  return {
    sigma,
    graph,
    nodes: graph.order,
    edges: graph.size,
    layoutMs,
    layoutDone,
    kill: () => {
      worker?.stop()
      killRenderer(sigma)
    },
  }
}
