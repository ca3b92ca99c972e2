// Runs a callback in a task of its own, after what is queued now, without the 4 ms clamp
// that browsers put on a chain of zero-delay timers: work cut into slices this way runs its
// slices back to back when nothing else waits, where chained `setTimeout(0)` left the worker
// idle for 4 ms between slices of 4 ms.

export interface TaskScheduler {
  /** Schedules `callback` as a new task; in Node it does not keep the process alive. */
  run(callback: () => void): void
  /** Drops what is scheduled and lets go of the channel. */
  close(): void
}

export function taskScheduler(): TaskScheduler {
  // Node: a check-phase callback is not clamped, and an unref'd one does not hold the process
  if (typeof setImmediate === 'function') {
    const pending = new Set<ReturnType<typeof setImmediate>>()
    return {
      run(callback) {
        const handle = setImmediate(() => {
          pending.delete(handle)
          callback()
        })
        ;(handle as { unref?: () => void }).unref?.()
        pending.add(handle)
      },
      close() {
        for (const handle of pending) clearImmediate(handle)
        pending.clear()
      },
    }
  }
  const channel = new MessageChannel()
  const queued: Array<() => void> = []
  channel.port1.onmessage = () => queued.shift()?.()
  return {
    run(callback) {
      queued.push(callback)
      channel.port2.postMessage(null)
    },
    close() {
      queued.length = 0
      channel.port1.close()
    },
  }
}
