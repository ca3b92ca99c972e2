// Access tiers, granted per agent-to-memory connection. Strictly nested.
import { MemoryError } from './errors'
import type { ConnectionRecord, Tier } from './types'

export const TIERS: readonly Tier[] = ['read', 'read_write', 'full']
export const DEFAULT_TIER: Tier = 'read_write'

/** The tier each operation needs. */
export const OPERATION_TIER = {
  recall: 'read',
  inspect: 'read',
  getObservation: 'read',
  listFiles: 'read',
  readFile: 'read',
  listProposals: 'read',
  listSingleValued: 'read',
  write: 'read_write',
  storeFile: 'read_write',
  consolidate: 'read_write',
  acceptProposal: 'read_write',
  rejectProposal: 'read_write',
  update: 'full',
  delete: 'full',
  /** The memory's single-valued relationship types are the owner's declaration, like its settings map. */
  setSingleValued: 'full',
} as const satisfies Record<string, Tier>

export type Operation = keyof typeof OPERATION_TIER

export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && (TIERS as readonly string[]).includes(value)
}

export function tierGrants(held: Tier, needed: Tier): boolean {
  return TIERS.indexOf(held) >= TIERS.indexOf(needed)
}

export function requireTier(held: Tier, operation: Operation): void {
  const needed = OPERATION_TIER[operation]
  if (!tierGrants(held, needed)) {
    throw new MemoryError(
      'forbidden',
      `${operation} needs a ${needed} connection; this connection is ${held}. Ask the memory's owner for a ${needed} connection.`,
      { operation, needed, held },
    )
  }
}

/**
 * Refuses a call through a connection that is revoked, or that the memory no longer holds.
 * The one rule for every place that checks it: the handle, and the write transaction that reads
 * the stored connection so a revoke made by another instance cannot race a write.
 */
export function requireLiveConnection(id: string, connection: Pick<ConnectionRecord, 'agent' | 'revokedAt'> | undefined): void {
  if (connection && !connection.revokedAt) return
  const who = connection ? `connection ${id} (${connection.agent})` : `connection ${id}`
  throw new MemoryError('revoked', `${who} was revoked; ask for a new connection`, { connection: id })
}
