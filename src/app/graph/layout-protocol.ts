// Messages between the graph scene and its layout worker.

export interface LayoutRequest {
  /** x, y of node i at 2i, 2i + 1. */
  positions: Float32Array
  /** Node indices, source and target of edge j at 2j, 2j + 1. */
  edges: Uint32Array
  iterations: number
  /** The layout stops after this long even with passes left. */
  maxMs: number
  /** Positions so far are sent this often, so the graph visibly settles. */
  progressMs: number
}

export interface LayoutReply {
  positions: Float32Array
  iterations: number
  ms: number
  /** The last reply: the layout has stopped. */
  final: boolean
}
