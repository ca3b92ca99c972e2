// What the access-cut benches share: a cut is timed from the call to the server closing a live
// socket, and counts as holding only if that socket and a new one with the same secret are refused.
import type { SyncClient } from '../../src/sync/client'
import { percentile } from './stats'

export interface CutRow {
  path: string
  rounds: number
  p50Ms: number
  p95Ms: number
  maxMs: number
  /** Every live socket was closed with the expected code and a new socket with the same secret refused. */
  allRefused: boolean
}

/** Resolves with the close code once the server denies `client`. */
export function deniedCode(client: SyncClient): Promise<number> {
  return new Promise((resolve) => {
    const stop = client.on('status', (s) => {
      if (s.state === 'denied') {
        stop()
        resolve(s.closed?.code ?? 0)
      }
    })
  })
}

export function cutRow(path: string, times: number[], allRefused: boolean): CutRow {
  const r = (x: number) => Math.round(x * 10) / 10
  return { path, rounds: times.length, p50Ms: r(percentile(times, 50)), p95Ms: r(percentile(times, 95)), maxMs: r(Math.max(...times)), allRefused }
}
