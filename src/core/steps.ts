// Long synchronous work written as steps, so that a caller on a worker's loop can run it a turn
// at a time (answering what waits in between) while others run it at once.

/** Work done a step at a time: each `next()` does one step, and the last returns the result. */
export type Steps<T> = Generator<void, T, void>

/** Runs every step at once. */
export function allSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/** Runs the steps, awaiting `pace` after each (a pacer resolves at once until its turn is used up). */
export async function stepsInTurns<T>(steps: Steps<T>, pace: () => Promise<void> | undefined): Promise<T> {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
    await pace()
  }
}
