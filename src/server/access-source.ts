// The authorization seam of the sync server: who a token is, whether a connection was revoked,
// and the admin operations on tokens, asynchronous so the answers can come from a shared
// database (Redis) that every server of a deployment reads.
import type { ConnectionRecord, Tier } from '../core/types'
import type { AuthResult } from './auth-result'
import type { NewToken } from './token-registry'

export interface TokenAdmin {
  add(input: { memoryId: string; tier?: Tier; agent: string }): Promise<NewToken>
  /** Revokes a connection; every server holding one of its sockets closes it. */
  revoke(id: string): Promise<ConnectionRecord>
  list(memoryId?: string): Promise<ConnectionRecord[]>
}

export interface AccessSource extends TokenAdmin {
  authorize(token: string | null, room: string): Promise<AuthResult>
  /** Answered from what this server knows now; a connection revoked anywhere shows here within one message. */
  isRevoked(connectionId: string): boolean
  /** Called on this server for every revocation, wherever it was made. */
  onRevoked(listener: (connection: ConnectionRecord) => void): () => void
  close(): Promise<void>
}
