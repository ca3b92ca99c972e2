// Decides who a new socket is, and whether it is still allowed: a token the server issued (the
// token file, Redis or a custom authorize), else a connection the memory's owner shared in the
// memory itself, else an organization member's credential for a memory visible to and
// accepted by its organization.
import type { ConnectionRecord } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import { visibleTo, type SharedVisibility } from '../sync/visibility'
import type { AccessSource } from './access-source'
import type { AuthResult, Authorize } from './auth-result'
import type { SocketCuts } from './cuts'
import type { SyncLog } from './log'
import type { MemberOf } from './org-registry'
import type { OrgMemoryIndex, OrgSource } from './org-store'
import type { Rooms } from './rooms'
import { sharedConnectionOf } from './shared-access'
import type { TokenRegistry } from './token-registry'

export interface AuthSources {
  /** A deployment's own authorize: it alone answers. */
  custom?: Authorize
  /** Tokens in Redis. */
  access?: AccessSource
  /** The token file of the data directory (when neither of the above). */
  registry: TokenRegistry
  /** Organizations (the data directory's, or Redis's). */
  orgs?: OrgSource
  orgMemories?: OrgMemoryIndex
  rooms: Rooms
  cuts: SocketCuts
  log: SyncLog
}

/** The token file's answer, read again once when a token is unknown (the CLI may have just added it). */
function fileAuthorize(registry: TokenRegistry): Authorize {
  return (token, room) => {
    if (!token) return { ok: false, code: CLOSE.unauthorized, reason: 'a connection token is required (?token=...)' }
    let connection = registry.verify(token)
    if (!connection) {
      registry.reload()
      connection = registry.verify(token)
    }
    if (!connection) return { ok: false, code: CLOSE.unauthorized, reason: 'unknown connection token' }
    if (connection.revokedAt !== null) return { ok: false, code: CLOSE.revoked, reason: 'this connection token was revoked' }
    if (connection.memoryId !== room) return { ok: false, code: CLOSE.forbidden, reason: 'this token belongs to another memory' }
    return { ok: true, connection }
  }
}

/** A member reads a memory of its organization with the `read` tier; a removed member, or a memory not visible to it, is refused. */
async function memberAccess(s: AuthSources & { orgs: OrgSource }, token: string, room: string, visibility: SharedVisibility | null): Promise<AuthResult | null> {
  const { orgs, orgMemories, log } = s
  let found: MemberOf | null
  try {
    found = await orgs.lookup(token)
  } catch (err) {
    log('warn', 'orgs_unavailable', { error: (err as Error).message })
    return { ok: false, code: CLOSE.unavailable, reason: 'the organizations are unavailable; try again later' }
  }
  if (!found) return null
  const { org, member } = found
  if (member.removedAt !== null) return { ok: false, code: CLOSE.memberRemoved, reason: 'this member was removed from the organization' }
  // A private memory and one that does not exist get the same answer. Made visible through
  // another server a moment ago, the shared index says so first; the room's own document,
  // checked once it is loaded, still decides (socket-admission.ts).
  if (!visibleTo(visibility, org.id) && !(await orgMemories?.shows?.(room, org.id).catch(() => false))) {
    return { ok: false, code: CLOSE.forbidden, reason: 'this memory is not visible to your organization' }
  }
  orgs.catchUp()
  if (!orgs.accepts(org.id, room)) return { ok: false, code: CLOSE.forbidden, reason: 'this memory was not accepted into your organization\'s listing; an administrator of the server accepts it' }
  const connection: ConnectionRecord = { id: member.id, memoryId: room, agent: member.name, tier: 'read', tokenHash: member.credentialHash, createdAt: member.addedAt, revokedAt: null }
  return { ok: true, connection, member: { orgId: org.id } }
}

/**
 * Tokens the server issued first; otherwise a connection the memory's owner shared in the
 * memory itself; otherwise an organization member's credential, for a memory visible to it.
 */
export function composeAuthorize(s: AuthSources): Authorize {
  const { custom, access, registry, orgs, rooms } = s
  const issued: Authorize = custom ?? (access ? (token, room) => access.authorize(token, room) : fileAuthorize(registry))
  return async (token, room) => {
    const first = await issued(token, room)
    if (first.ok || first.code !== CLOSE.unauthorized || !token || custom !== undefined) return first
    const held = await rooms.access(room)
    return sharedConnectionOf(token, room, held.connections) ?? (orgs ? await memberAccess({ ...s, orgs }, token, room, held.visibility) : null) ?? first
  }
}

/**
 * Whether an admitted socket's connection was revoked since, asked before each of its updates.
 * A revoke by the CLI is in the file before it returns; the file watcher may not have fired yet.
 */
export function revokedSince(s: AuthSources, auth: Extract<AuthResult, { ok: true }>, room: string): () => boolean {
  const { custom, access, registry, orgs, cuts, log } = s
  const { connection, member } = auth
  if (member) {
    return () => {
      orgs?.catchUp()
      return cuts.memberCut(room, member.orgId, connection.id) !== null
    }
  }
  if (auth.shared) return () => cuts.revokedInRoom(room, connection.id)
  // Redis: revocations from every server arrive by pub/sub and are checked on connect.
  if (access) return () => access.isRevoked(connection.id)
  if (custom !== undefined) return () => false
  return () => {
    try {
      registry.reloadIfChanged()
    } catch (err) {
      log('error', 'token_reload_failed', { error: (err as Error).message })
    }
    return registry.isRevoked(connection.id)
  }
}
