// Which connection holds which sockets, and cutting them off: a revoked connection's sockets,
// a removed member's, and members' sockets to a memory no longer visible to or listed for
// their organization, each closed with the code that says why.
import type { WebSocket } from 'ws'
import type { ConnectionRecord } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import { checkSharedConnection, sharedConnectionsMap } from '../sync/shared-connections'
import { readVisibility, visibleTo, type SharedVisibility } from '../sync/visibility'
import type { AuthResult } from './auth-result'
import type { SyncLog } from './log'
import type { OrgSource } from './org-store'
import type { Rooms } from './rooms'

/** Why a socket is closed: a close code and its reason. */
export interface Cut {
  code: number
  reason: string
}

const REVOKED = 'this connection token was revoked'
const MEMBER_REMOVED = 'this member was removed from the organization'
const UNLISTED = 'this memory was taken out of your organization\'s listing'
const NOT_VISIBLE = 'this memory is no longer visible to your organization'

const memberKey = (memberId: string) => `\u0000member\u0000${memberId}`
/** The key of a connection the memory `room` holds in its own document. */
export const sharedKey = (room: string, id: string) => `${room}\u0000${id}`

/**
 * The key a connection's sockets are kept under. A memory's own connection ids are its owner's
 * to choose: keyed by room, so one memory's cannot name another's sockets. Member ids are the
 * registry's own (`mem-...`), apart from every connection id.
 */
export function socketKey(auth: Extract<AuthResult, { ok: true }>, room: string): string {
  if (auth.member) return memberKey(auth.connection.id)
  if (auth.shared) return sharedKey(room, auth.connection.id)
  return auth.connection.id
}

export class SocketCuts {
  private readonly sockets = new Map<string, Set<WebSocket>>()
  /** The room each socket of `sockets` is in (a member's sockets span rooms). */
  private readonly roomOf = new WeakMap<WebSocket, string>()
  /** Organization members' sockets by room, so making a memory private closes them at once. */
  private readonly memberSockets = new Map<string, Set<{ ws: WebSocket; orgId: string }>>()

  constructor(private readonly rooms: Rooms, private readonly orgs: OrgSource | undefined, private readonly log: SyncLog) {}

  /**
   * Keeps `ws` under its connection's key until it closes. A connection (an organization
   * member: in one room) holds a bounded number of sockets: each may ask for the whole room and
   * stop reading, and what is queued for it is the server's memory. Over the bound, `ws` is
   * closed and false returned.
   */
  admit(ws: WebSocket, key: string, room: string, connection: ConnectionRecord, member: { orgId: string } | undefined, limit: number): boolean {
    let set = this.sockets.get(key)
    const inThisRoom = [...(set ?? [])].filter((other) => this.roomOf.get(other) === room).length
    if (inThisRoom >= limit) {
      this.log('warn', 'too_many_sockets', { room, connection: connection.id, agent: connection.agent, sockets: inThisRoom })
      ws.close(CLOSE.tooManySockets, `this connection already has ${inThisRoom} sockets open to this memory; close one first`)
      return false
    }
    if (!set) this.sockets.set(key, (set = new Set()))
    const sockets = set
    sockets.add(ws)
    this.roomOf.set(ws, room)
    ws.on('close', () => {
      sockets.delete(ws)
      if (sockets.size === 0) this.sockets.delete(key)
    })
    if (member) {
      const entry = { ws, orgId: member.orgId }
      let inRoom = this.memberSockets.get(room)
      if (!inRoom) this.memberSockets.set(room, (inRoom = new Set()))
      const members = inRoom
      members.add(entry)
      ws.on('close', () => {
        members.delete(entry)
        if (members.size === 0) this.memberSockets.delete(room)
      })
    }
    return true
  }

  private closeSocketsOf(key: string, code: number, reason: string): void {
    for (const ws of this.sockets.get(key) ?? []) ws.close(code, reason)
  }

  /** A connection was revoked (in the token file, Redis, or the memory's own connections under `key`). */
  revoked(c: ConnectionRecord, key = c.id): void {
    this.log('info', 'connection_revoked', { connection: c.id, agent: c.agent, room: c.memoryId })
    this.closeSocketsOf(key, CLOSE.revoked, REVOKED)
  }

  /** An organization took the memory out of its listing. */
  unlisted(orgId: string, room: string): void {
    for (const { ws, orgId: of } of this.memberSockets.get(room) ?? []) {
      if (of === orgId) ws.close(CLOSE.notVisible, UNLISTED)
    }
  }

  memberRemoved(orgId: string, member: { id: string; name: string }): void {
    this.log('info', 'member_removed', { org: orgId, member: member.id, name: member.name })
    this.closeSocketsOf(memberKey(member.id), CLOSE.memberRemoved, MEMBER_REMOVED)
  }

  /** The room's visibility changed: members of organizations it no longer shows to are cut. */
  visibilityChanged(room: string, v: SharedVisibility | null): void {
    for (const { ws, orgId } of this.memberSockets.get(room) ?? []) {
      if (visibleTo(v, orgId)) continue
      this.log('info', 'member_access_ended', { room, org: orgId, visibility: v?.visibility ?? 'private' })
      ws.close(CLOSE.notVisible, NOT_VISIBLE)
    }
  }

  /** Why a member's socket may no longer read the room, or null while it may. */
  memberCut(room: string, orgId: string, memberId: string): Cut | null {
    const orgs = this.orgs
    if (!orgs) return null
    if (!orgs.isActive(orgId, memberId)) return { code: CLOSE.memberRemoved, reason: MEMBER_REMOVED }
    if (!orgs.accepts(orgId, room)) return { code: CLOSE.notVisible, reason: UNLISTED }
    const doc = this.rooms.live(room)
    if (doc && !visibleTo(readVisibility(doc), orgId)) return { code: CLOSE.notVisible, reason: NOT_VISIBLE }
    return null
  }

  /** Whether a connection the memory holds was revoked there (checked before each of its updates). */
  revokedInRoom(room: string, connectionId: string): boolean {
    const doc = this.rooms.live(room)
    if (!doc) return false
    const r = checkSharedConnection(connectionId, sharedConnectionsMap(doc).get(connectionId))
    return r.ok && r.value.revokedAt !== null
  }
}

export const REVOKED_CUT: Cut = { code: CLOSE.revoked, reason: REVOKED }
