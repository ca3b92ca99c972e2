// What every embedder run by onnxruntime-web shares: one session, one run on it at a time
// (callers may overlap), and a release that waits for the run in flight.
import { Serial } from '../core/serial'
import type { Embedder } from './embedder'
import type { ort } from './ort'

export abstract class SessionEmbedder implements Embedder {
  abstract readonly id: string
  abstract readonly dimensions: number
  abstract readonly checksum: string
  private readonly serial = new Serial()

  constructor(protected readonly session: ort.InferenceSession) {}

  embed(texts: string[]): Promise<Float32Array[]> {
    return this.serial.run(() => this.embedNow(texts))
  }

  async dispose(): Promise<void> {
    await this.serial.idle()
    await this.session.release()
  }

  /** The vectors of `texts`, in order; never two at once. */
  protected abstract embedNow(texts: string[]): Promise<Float32Array[]>

  /**
   * One vector per input, run in batches of inputs sorted by length so padding stays small; an
   * input of length 0 keeps the zero vector. `batchEnd(order, start)`: where the batch starting
   * at `order[start]` ends (exclusive). `run` returns the batch's vectors as consecutive rows.
   */
  protected async inLengthOrder(lengths: readonly number[], batchEnd: (order: readonly number[], start: number) => number, run: (batch: number[]) => Promise<Float32Array>): Promise<Float32Array[]> {
    const d = this.dimensions
    const out = lengths.map(() => new Float32Array(d))
    const order = lengths.map((_, i) => i).filter((i) => lengths[i]! > 0)
    order.sort((a, b) => lengths[a]! - lengths[b]!)
    for (let start = 0; start < order.length; ) {
      const end = batchEnd(order, start)
      const batch = order.slice(start, end)
      const vectors = await run(batch)
      batch.forEach((i, row) => out[i]!.set(vectors.subarray(row * d, (row + 1) * d)))
      start = end
    }
    return out
  }
}
