// What the sync server's authorization seam decides about a socket, as types alone, so every
// source of answers (the token file, a memory's own connections, organizations, Redis) and the
// server that asks them share one definition without importing each other.
import type { ConnectionRecord } from '../core/types'

/**
 * `shared`: a connection the memory holds in its own document (the memory's owner made it), not a server token.
 * `member`: an organization member's credential, for a memory visible to that organization (always `read`).
 */
export type AuthResult = { ok: true; connection: ConnectionRecord; shared?: boolean; member?: { orgId: string } } | { ok: false; code: number; reason: string }

/** Decides who a socket is. The default checks the token registry in the data directory. */
export type Authorize = (token: string | null, room: string) => AuthResult | Promise<AuthResult>
