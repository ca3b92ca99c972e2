// What recall needs from an embedding model: deterministic, L2-normalized vectors.

export interface Embedder {
  /** Stable id stored in a memory's retrieval config, e.g. `cairn-glove-100d@1`. */
  readonly id: string
  readonly dimensions: number
  /** sha256 (hex) of the model bytes, frozen into the retrieval config. */
  readonly checksum: string
  /** One L2-normalized vector per text, in order; a text with no known token yields a zero vector. */
  embed(texts: string[]): Promise<Float32Array[]>
  dispose?(): Promise<void>
}
