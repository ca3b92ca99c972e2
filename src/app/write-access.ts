// What the person using the app may change in a memory from this device, and why not when they
// may not: screens offer capture and edit only where the engine would accept them.
import { OPERATION_TIER, tierGrants } from '../core/access'
import type { Tier } from '../core/types'

export interface WriteAccess {
  /** The app's own connection's tier. */
  tier: Tier
  /** Why a note cannot be captured here ('' when it can). */
  capture: string
  /** Why a note cannot be edited or deleted here ('' when it can). */
  edit: string
  /** Why this device cannot pair another one ('' when it can): pairing gives a new device the owner's access. */
  pair: string
}

/** The access of a connection of `tier`; `memberCopy` when the device reads as an organization member. */
export function writeAccess(tier: Tier, memberCopy: boolean): WriteAccess {
  const why = (needed: Tier): string => {
    if (tierGrants(tier, needed)) return ''
    if (memberCopy) return 'Read-only: you read this memory as a member of its organization, and only its owner changes it.'
    return `Read-only here: this device's connection to the memory is ${tier}, and this needs ${needed}. Ask the memory's owner for a ${needed} connection.`
  }
  return { tier, capture: why(OPERATION_TIER.write), edit: why(OPERATION_TIER.update), pair: why('full') }
}
