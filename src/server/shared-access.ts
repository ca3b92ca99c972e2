// Authorizes a token against the connections a memory holds in its own document (made by its
// owner in the app, the library or the CLI), so the sync server honors the same tokens, tiers
// and revocations as every device. Compared by sha256 in constant time, every entry visited.
import { timingSafeEqual } from 'node:crypto'
import { CREDENTIAL_CHARS } from '../core/limits'
import { CLOSE } from '../sync/close-codes'
import type { SharedConnection } from '../sync/shared-connections'
import type { AuthResult } from './auth-result'
import { hashToken } from './token-registry'

export function sharedConnectionOf(token: string, room: string, connections: ReadonlyMap<string, SharedConnection>): AuthResult | null {
  if (token.length === 0 || token.length > CREDENTIAL_CHARS) return null
  const hash = Buffer.from(hashToken(token), 'hex')
  let found: SharedConnection | null = null
  for (const c of connections.values()) {
    const other = Buffer.from(c.tokenHash, 'hex')
    if (other.length === hash.length && timingSafeEqual(other, hash)) found = c
  }
  if (!found) return null
  if (found.revokedAt !== null) return { ok: false, code: CLOSE.revoked, reason: 'this connection token was revoked' }
  return { ok: true, connection: { ...found, memoryId: room }, shared: true }
}
