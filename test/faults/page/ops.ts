// The write stream a fault test sends through the page, and when the page kills the worker.
import type { ObservationInput, ObservationPatch } from '../../../src/core/types'

/** `ref` is the index of the write op whose observation an update or delete targets. */
export type Op =
  | { kind: 'write'; input: ObservationInput }
  | { kind: 'update'; ref: number; patch: ObservationPatch }
  | { kind: 'delete'; ref: number }

/**
 * Kill once `afterAcks` ops were acknowledged plus `delayMs`, or `atMs` after the stream started;
 * or, with `releaseAfterAcks`, report after that many acks and keep writing, for the test to
 * reload the page in the middle of it.
 */
export type KillPlan = { afterAcks: number; delayMs: number } | { atMs: number } | { releaseAfterAcks: number }

export interface Ack {
  index: number
  slug: string
}

export interface StreamOutcome {
  acks: Ack[]
  /** Index of the op in flight when the worker was killed (its promise never settled), or -1. */
  inFlight: number
  killedAtMs: number
  errors: string[]
}
