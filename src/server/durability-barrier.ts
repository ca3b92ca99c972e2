// Tracks a room's updates on their way to durable storage, so messages to clients can wait
// for them: an update is relayed (or sent in a sync reply) only once it cannot be lost.
export class DurabilityBarrier {
  private tail: Promise<void> = Promise.resolve()
  private pending = 0

  /** Adds a write; `onFail` runs if it fails (the barrier still moves on). */
  add(write: Promise<void>, onFail: (err: Error) => void): void {
    this.pending++
    const settled = write.then(() => undefined, (err: unknown) => onFail(err as Error)).finally(() => this.pending--)
    // Writes go out at once (Redis answers them in order); the barrier only waits for all of them.
    this.tail = Promise.all([this.tail, settled]).then(() => undefined)
  }

  /** What a message sent now must wait for, or null when every write so far is durable. */
  current(): Promise<void> | null {
    return this.pending === 0 ? null : this.tail
  }
}
