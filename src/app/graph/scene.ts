// Draws a graph slice with sigma on WebGL: canvas and SVG renderers stall at thousands of
// nodes, WebGL stays fluid. Labels are drawn by sigma on its canvas, so names are never HTML.
// Nodes are colored by entity type; the best-connected names are always labeled, and every
// label is placed whole inside the view; a slice around a center is framed on that center.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'
import Sigma from 'sigma'
import { createNodeCompoundProgram, NodeCircleProgram, type NodeHoverDrawingFunction, type NodeLabelDrawingFunction } from 'sigma/rendering'
import { typeColors } from './colors'
import { inView as nodeInView, placeLabel, type LabelBox } from './label-place'
import type { LayoutReply, LayoutRequest } from './layout-protocol'
import { typeLabel } from '../parts/labels'

export { webglAvailable } from './webgl'

export interface SceneNode {
  key: string
  name: string
  /** The entity type, which picks the node's color. */
  type: string
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

/** What the last frame drew, in view pixels: for tests and the screen's checks. */
export interface SceneReport {
  view: { width: number; height: number }
  labels: Array<LabelBox & { name: string }>
  /** Every node's center in the view now. */
  nodes: Array<{ name: string; x: number; y: number }>
  /** The node `focus` moved to, where it is in the view now. */
  focused: { name: string; x: number; y: number } | null
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
  /** Moves the camera to the entity of that name (any case) and marks it; false when it is not drawn. */
  focus(name: string): Promise<boolean>
  report(): SceneReport
  kill(): void
}

/** This many of the best-connected entities always show their names (every one, in a slice this small). */
const ALWAYS_LABELED = 12
const LABEL_SIZE = 13
/** Room around the drawn graph, in view pixels, so the outermost nodes are not on the edge. */
const STAGE_PADDING = 40

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
  const { colorOf } = typeColors(nodes)
  const labeled = new Set([...nodes].sort((a, b) => b.degree - a.degree || a.name.localeCompare(b.name)).slice(0, ALWAYS_LABELED).map((n) => n.key))
  const center = centerOf(nodes)
  nodes.forEach((node, i) => {
    const r = Math.sqrt(i + 0.5)
    const a = i * 2.399963
    graph.addNode(node.key, {
      x: r * Math.cos(a), y: r * Math.sin(a),
      label: node.name,
      entityType: node.type,
      size: 4 + Math.min(12, Math.sqrt(node.degree) * 2),
      color: colorOf(node.type),
      ...(labeled.has(node.key) || node.key === center ? { forceLabel: true } : {}),
      ...(node.key === center ? { highlighted: true } : {}),
    })
  })
  for (const e of edges) {
    if (graph.hasNode(e.source) && graph.hasNode(e.target) && !graph.hasEdge(e.source, e.target)) graph.addDirectedEdgeWithKey(e.key, e.source, e.target, { size: 1, color: '#cbd5e1', relType: typeLabel(e.type ?? '') })
  }
  return graph
}

/** The one entity at zero steps, when the slice was taken around a center. */
function centerOf(nodes: readonly SceneNode[]): string | undefined {
  const roots = nodes.filter((n) => n.hops === 0)
  return roots.length === 1 && nodes.length > 1 ? roots[0]!.key : undefined
}

/** A box with the center in its middle that holds every node: framed on it, the center sits in the middle of the view. */
function bboxAround(graph: Graph, center: string): { x: [number, number]; y: [number, number] } {
  const cx = graph.getNodeAttribute(center, 'x') as number
  const cy = graph.getNodeAttribute(center, 'y') as number
  let rx = 0
  let ry = 0
  graph.forEachNode((_k, a) => {
    rx = Math.max(rx, Math.abs((a.x as number) - cx))
    ry = Math.max(ry, Math.abs((a.y as number) - cy))
  })
  rx ||= ry || 1
  ry ||= rx
  return { x: [cx - rx, cx + rx], y: [cy - ry, cy + ry] }
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
  let focused: string | null = null
  // the labels the last frame drew, by name (the hover layer redraws some without a new frame)
  let drawn = new Map<string, LabelBox>()
  // a label placed whole inside the view, over a white halo so edges do not cross its letters
  const drawLabel = (context: CanvasRenderingContext2D, data: { x: number; y: number; size: number; label: string | null }, font: string): LabelBox | null => {
    if (!data.label) return null
    // sigma also offers nodes just outside the view: a name pinned to the edge would point at nothing
    // (the first frame is drawn inside sigma's constructor, so the size is read from the container)
    const view = renderer?.getDimensions() ?? { width: container.offsetWidth, height: container.offsetHeight }
    if (!nodeInView(data, view)) return null
    context.font = font
    const box = placeLabel(data, context.measureText(data.label).width, LABEL_SIZE, view, [...drawn.values()])
    context.lineJoin = 'round'
    context.lineWidth = 4
    context.strokeStyle = 'rgba(255, 255, 255, 0.9)'
    context.strokeText(data.label, box.x, box.baseline)
    context.fillStyle = '#1e293b'
    context.fillText(data.label, box.x, box.baseline)
    return box
  }
  // the reducer runs during the first render, before the constructor has returned
  let renderer: Sigma | undefined
  const drawNodeLabel: NodeLabelDrawingFunction = (context, data, settings) => {
    // a highlighted entity's name is drawn once, bold, by the hover drawing below
    if (data.highlighted) return
    const box = drawLabel(context, data, `${settings.labelWeight} ${LABEL_SIZE}px ${settings.labelFont}`)
    if (box) drawn.set(data.label!, box)
  }
  // the hovered or found entity: a ring around the node and its name, bold, placed like the others
  const drawNodeHover: NodeHoverDrawingFunction = (context, data, settings) => {
    context.beginPath()
    context.arc(data.x, data.y, data.size + 3, 0, Math.PI * 2)
    context.fillStyle = '#ffffff'
    context.shadowColor = 'rgba(15, 23, 42, 0.45)'
    context.shadowBlur = 8
    context.fill()
    context.shadowBlur = 0
    context.beginPath()
    context.arc(data.x, data.y, data.size, 0, Math.PI * 2)
    context.fillStyle = data.color
    context.fill()
    const box = drawLabel(context, data, `bold ${LABEL_SIZE}px ${settings.labelFont}`)
    if (box) drawn.set(data.label!, box)
  }
  const sigma: Sigma = new Sigma(graph, container, {
    // an edge carries its type as a label only around the hovered entity or when zoomed in (the reducer below)
    renderEdgeLabels: true,
    edgeLabelSize: 12,
    edgeLabelColor: { color: '#334155' },
    // names compete for room on a grid, so they do not pile on each other
    labelDensity: 0.6,
    labelGridCellSize: 110,
    labelRenderedSizeThreshold: small ? 0 : 8,
    labelSize: LABEL_SIZE,
    stagePadding: STAGE_PADDING,
    zIndex: true,
    // the circle program brings its own label drawing, which would win over a default: ours replaces it
    nodeProgramClasses: { circle: createNodeCompoundProgram([NodeCircleProgram], drawNodeLabel, drawNodeHover) },
    nodeReducer: (node, data) => (node === focused ? { ...data, highlighted: true, forceLabel: true, zIndex: 1 } : data),
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
  sigma.on('beforeRender', () => {
    drawn = new Map()
  })
  const center = centerOf(nodes)
  // a slice around a center opens framed on it (a large one settles in a worker: sigma frames it as it moves)
  if (center && small) {
    sigma.setCustomBBox(bboxAround(graph, center))
    sigma.refresh()
  }
  const focus = async (name: string): Promise<boolean> => {
    const wanted = name.trim().toLowerCase()
    const key = graph.findNode((_k, a) => String(a.label).toLowerCase() === wanted)
    if (key === undefined) return false
    focused = key
    const at = sigma.getNodeDisplayData(key)!
    const camera = sigma.getCamera()
    await camera.animate({ x: at.x, y: at.y, ratio: Math.min(camera.ratio, 0.8) }, { duration: 350 })
    sigma.refresh()
    return true
  }
  const inView = (key: string) => ({ name: String(graph.getNodeAttribute(key, 'label')), ...sigma.graphToViewport({ x: graph.getNodeAttribute(key, 'x') as number, y: graph.getNodeAttribute(key, 'y') as number }) })
  const report = (): SceneReport => ({
    view: sigma.getDimensions(),
    labels: [...drawn].map(([name, box]) => ({ name, ...box })),
    nodes: graph.mapNodes((key) => inView(key)),
    focused: focused === null ? null : inView(focused),
  })
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
    focus,
    report,
    kill: () => {
      worker?.stop()
      killRenderer(sigma)
    },
  }
}
