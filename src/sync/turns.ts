// Long work on the sync document cut into turns, so the worker answers what waits (a recall's
// message) between them: at 100,000 notes reading, checking or writing the whole document at
// once held it for seconds.

/**
 * Resolves in a task of its own, after what waits now: a message where browsers would clamp a
 * chain of zero-delay timers to 4 ms each, an immediate in Node (one that holds the process,
 * so the work is never cut off).
 */
export function nextTurn(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve))
  return new Promise((resolve) => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      resolve()
    }
    channel.port2.postMessage(null)
  })
}

/** About how long one turn of such work runs before it gives the worker back. */
export const TURN_MS = 16
/** Steps between two looks at the clock. */
const STEPS_PER_LOOK = 64

/**
 * A pacer for a loop of small steps: called once a step, it returns a promise (await it) once
 * `ms` have passed since the last turn began, and nothing otherwise.
 */
export function turns(ms = TURN_MS): () => Promise<void> | undefined {
  let began = performance.now()
  let steps = 0
  return () => {
    if (++steps % STEPS_PER_LOOK !== 0 || performance.now() - began < ms) return undefined
    return nextTurn().then(() => {
      began = performance.now()
    })
  }
}
