// Runs tasks one at a time in call order; a failed task does not stop the ones after it.
// (An onnxruntime session takes one run at a time.)

export class Serial {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task)
    this.tail = result.catch(() => undefined)
    return result
  }

  /** Resolves once every task queued so far has settled. */
  async idle(): Promise<void> {
    await this.tail
  }

  /** Resolves once the queue is empty, tasks queued while waiting included. */
  async drained(): Promise<void> {
    let seen: Promise<unknown>
    do {
      seen = this.tail
      await seen
    } while (seen !== this.tail)
  }
}
