// How often a screen that follows a memory is refreshed as changes arrive: a run of changes
// close together refreshes it once, and while the memory is still receiving a first sync
// (changes one after another for minutes, on the worker that would also answer each refresh)
// at most every few seconds.

/** Changes arriving closer together than this refresh a screen once. */
export const REFRESH_GATHER_MS = 150
/**
 * While a first sync arrives: each refresh is a recall or a list on the worker applying it. At
 * 100,000 notes a refresh after every change took a third of the worker's time and a recall
 * of up to a few hundred ms between pieces.
 */
export const REFRESH_WHILE_RECEIVING_MS = 2_000

export interface ChangeGather {
  /** A change was made: `fire` runs once the gathering time has passed since the first change not yet refreshed for. */
  changed(): void
  stop(): void
}

/** Gathers changes and calls `fire` once for each run of them; `receiving()` says whether a first sync is arriving. */
export function gatherChanges(fire: () => void, receiving: () => boolean): ChangeGather {
  let timer: ReturnType<typeof setTimeout> | undefined
  return {
    changed() {
      timer ??= setTimeout(() => {
        timer = undefined
        fire()
      }, receiving() ? REFRESH_WHILE_RECEIVING_MS : REFRESH_GATHER_MS)
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    },
  }
}
