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
}
