// ForceAtlas2 for a large graph slice, off the main thread: the page stays responsive and
// sigma redraws only when a batch of positions arrives (each redraw of thousands of nodes is
// costly), instead of after every pass.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'
import type { LayoutReply, LayoutRequest } from './layout-protocol'

/** Passes per call: small enough to check the clock often, large enough that setup is amortised. */
const STEP = 5

const scope = self as unknown as { onmessage: ((event: MessageEvent<LayoutRequest>) => void) | null; postMessage(message: LayoutReply, transfer: Transferable[]): void }

scope.onmessage = ({ data }) => {
  const t0 = performance.now()
  const n = data.positions.length / 2
  const graph = new Graph({ type: 'undirected', multi: true, allowSelfLoops: false })
  for (let i = 0; i < n; i++) graph.addNode(i, { x: data.positions[2 * i]!, y: data.positions[2 * i + 1]! })
  for (let e = 0; e < data.edges.length; e += 2) graph.addEdge(data.edges[e]!, data.edges[e + 1]!)
  const settings = { ...forceAtlas2.inferSettings(graph), barnesHutOptimize: true }
  let done = 0
  let lastPost = t0
  const send = (final: boolean): void => {
    const positions = new Float32Array(2 * n)
    graph.forEachNode((key, attr) => {
      positions[2 * Number(key)] = attr.x as number
      positions[2 * Number(key) + 1] = attr.y as number
    })
    scope.postMessage({ positions, iterations: done, ms: performance.now() - t0, final }, [positions.buffer])
  }
  while (done < data.iterations && performance.now() - t0 < data.maxMs) {
    const step = Math.min(STEP, data.iterations - done)
    forceAtlas2.assign(graph, { iterations: step, settings })
    done += step
    if (performance.now() - lastPost >= data.progressMs && done < data.iterations) {
      send(false)
      lastPost = performance.now()
    }
  }
  send(true)
}
