// A memory's agent-to-memory connections as they travel in its sync document: one entry per
// connection id in the `access` map, holding the token's sha256 and never the token, so a
// sync server (and every replica, such as an MCP server's) authorizes the same tokens with the
// same tiers, and a revoke written anywhere reaches everyone that holds the memory.
import * as Y from 'yjs'
import { isTier } from '../core/access'
import { isLabel } from '../core/identifiers'
import { LABEL_CHARS } from '../core/limits'
import type { ConnectionRecord } from '../core/types'
import { ROOTS } from './layout'
import type { Checked } from './validate'

/** A connection as the document holds it: the memory is the document's. */
export type SharedConnection = Omit<ConnectionRecord, 'memoryId'>

/** Ids the library makes (`conn-` and letters or digits), apart from the sync server's `conn_` tokens. */
export const SHARED_CONNECTION_ID = /^conn-[a-z0-9]{1,64}$/
const FIELDS = ['id', 'agent', 'tier', 'tokenHash', 'createdAt', 'revokedAt'] as const
const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/

export function checkSharedConnection(key: string, value: unknown): Checked<SharedConnection> {
  const no = (reason: string): Checked<SharedConnection> => ({ ok: false, reason })
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array || value instanceof Y.AbstractType) return no('a connection must be an object')
  const o = value as Record<string, unknown>
  for (const k of Object.keys(o)) if (!(FIELDS as readonly string[]).includes(k)) return no(`a connection has an unknown field "${k.slice(0, 40)}"`)
  const own = (k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined)
  const id = own('id'), agent = own('agent'), tier = own('tier'), tokenHash = own('tokenHash'), createdAt = own('createdAt'), revokedAt = own('revokedAt')
  if (typeof id !== 'string' || !SHARED_CONNECTION_ID.test(id) || id !== key) return no('a connection id is "conn-" and up to 64 letters or digits, and is its key')
  if (!isLabel(agent) || agent !== agent.trim()) return no(`a connection agent is a name of 1 to ${LABEL_CHARS} characters`)
  if (!isTier(tier)) return no('a connection tier is read, read_write or full')
  if (typeof tokenHash !== 'string' || !/^[0-9a-f]{64}$/.test(tokenHash)) return no('a connection token hash is 64 lowercase hex digits')
  if (typeof createdAt !== 'string' || !DATE.test(createdAt)) return no('a connection createdAt is an ISO time')
  if (revokedAt !== null && (typeof revokedAt !== 'string' || !DATE.test(revokedAt))) return no('a connection revokedAt is null or an ISO time')
  return { ok: true, value: { id, agent, tier, tokenHash, createdAt, revokedAt } }
}

/**
 * Whether `next` may replace `previous` in the document: a connection never changes its agent,
 * tier or token, and a revoke is for good (an equal value is also allowed: a device re-sharing
 * what it holds). Every holder of the document and the sync server apply this same rule.
 */
export function isAllowedSuccessor(previous: SharedConnection, next: SharedConnection): boolean {
  const same = previous.id === next.id && previous.agent === next.agent && previous.tier === next.tier &&
    previous.tokenHash === next.tokenHash && previous.createdAt === next.createdAt
  if (!same) return false
  return previous.revokedAt === null || previous.revokedAt === next.revokedAt
}

export function sharedConnectionsMap(doc: Y.Doc): Y.Map<unknown> {
  return doc.getMap(ROOTS.access)
}

/** The document's valid connections by id; invalid entries are left out. */
export function readSharedConnections(doc: Y.Doc): Map<string, SharedConnection> {
  const out = new Map<string, SharedConnection>()
  sharedConnectionsMap(doc).forEach((value, key) => {
    const r = checkSharedConnection(key, value)
    if (r.ok) out.set(key, r.value)
  })
  return out
}

/** Writes connections the document lacks or holds unrevoked, in one transaction; others are left as they are. */
export function shareConnections(doc: Y.Doc, connections: Iterable<SharedConnection>, origin: unknown = null): number {
  const map = sharedConnectionsMap(doc)
  const writes: SharedConnection[] = []
  for (const c of connections) {
    const r = checkSharedConnection(c.id, toShared(c))
    if (!r.ok) continue
    const there = map.get(c.id)
    const current = there === undefined ? null : checkSharedConnection(c.id, there)
    if (current?.ok && JSON.stringify(current.value) === JSON.stringify(r.value)) continue
    if (current?.ok && !isAllowedSuccessor(current.value, r.value)) continue
    writes.push(r.value)
  }
  if (writes.length) doc.transact(() => writes.forEach((c) => map.set(c.id, c)), origin)
  return writes.length
}

export function toShared(c: SharedConnection | ConnectionRecord): SharedConnection {
  return { id: c.id, agent: c.agent, tier: c.tier, tokenHash: c.tokenHash, createdAt: c.createdAt, revokedAt: c.revokedAt }
}
