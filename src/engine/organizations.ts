// A member of an organization on a sync server: list the memories the organization may read,
// and keep a copy of one on this device, read with the `read` tier and cached for offline use.
// The server is the judge: it lists only organization-visible memories, opens them for the
// member's credential with `read` (its updates refused), and cuts the member off when it is
// removed or the memory is made private; this copy then stops its read connection too.
import { MemoryError } from '../core/errors'
import type { MemberKind } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import type { SyncOptions } from '../sync/memory-sync'
import type { Connection } from './connection'
import { listMemories, Memory, type CreateMemoryOptions } from './memory-handle'

export interface OrganizationListing {
  org: { id: string; name: string }
  member: { id: string; kind: MemberKind; name: string }
  /** Organization-visible memories only; private ones are never listed. */
  memories: Array<{ id: string; name: string; publishedBy?: string | null }>
}

export interface OrganizationAccess {
  /** The sync server, e.g. `ws://127.0.0.1:1234` (its listing is the same host over HTTP). */
  serverUrl: string
  /** The member credential the server's operator gave this agent or device (shown once). */
  credential: string
  /** Defaults to the global fetch. */
  fetch?: typeof fetch
}

/** The listing address of a sync server: `ws` becomes `http`, `wss` becomes `https`. */
export function listingUrl(serverUrl: string): string {
  let url: URL
  try {
    url = new URL(serverUrl)
  } catch {
    throw new MemoryError('invalid_request', `"${String(serverUrl).slice(0, 200)}" is not a sync server URL (ws://host:port)`)
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:' && url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MemoryError('invalid_request', 'a sync server URL starts with ws://, wss://, http:// or https://')
  }
  url.protocol = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:'
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/org/memories`
  url.search = ''
  return url.toString()
}

/** Lists what the member's organization may read. Fails with `forbidden` (unknown credential) or `revoked` (member removed). */
export async function listOrganizationMemories(access: OrganizationAccess): Promise<OrganizationListing> {
  if (typeof access.credential !== 'string' || !access.credential.trim()) throw new MemoryError('invalid_request', 'a member credential is required')
  const doFetch = access.fetch ?? globalThis.fetch
  let res: Response
  try {
    res = await doFetch(listingUrl(access.serverUrl), { headers: { authorization: `Bearer ${access.credential.trim()}` } })
  } catch (err) {
    if (err instanceof MemoryError) throw err
    throw new MemoryError('invalid_request', `cannot reach the sync server: ${(err as Error).message}`)
  }
  const body = (await res.json().catch(() => null)) as (OrganizationListing & { code?: string; message?: string }) | null
  if (res.status === 401) throw new MemoryError('forbidden', 'the server does not know this member credential')
  if (res.status === 403 && body?.code === 'member_removed') throw new MemoryError('revoked', 'this member was removed from the organization', { reason: 'member_removed' })
  if (!res.ok || !body || !Array.isArray(body.memories)) throw new MemoryError('invalid_request', `the sync server answered ${res.status}: ${body?.message ?? 'no organization listing'}`)
  return { org: body.org, member: body.member, memories: body.memories }
}

export interface JoinOrganizationMemory extends OrganizationAccess, Omit<CreateMemoryOptions, 'name' | 'id' | 'visibility' | 'orgId'> {
  memoryId: string
  WebSocketPolyfill?: SyncOptions['WebSocketPolyfill']
  crossTab?: boolean
  /** How long to wait for the first sync; default 10 s. */
  timeoutMs?: number
}

/** Why the server cut a member off: it stays off, so the copy's read connection is revoked. */
const CUT_OFF: ReadonlySet<number> = new Set([CLOSE.memberRemoved, CLOSE.notVisible, CLOSE.forbidden])

/**
 * Makes (or reopens) this device's copy of an organization memory, organization-visible with
 * the organization's id, fills it from the server with the member credential, and returns it
 * with a `read` connection to read it through. The copy stays on the device for offline reading.
 */
export async function joinOrganizationMemory(opts: JoinOrganizationMemory): Promise<{ memory: Memory; connection: Connection; listing: OrganizationListing }> {
  const { serverUrl, credential, memoryId, WebSocketPolyfill, crossTab, timeoutMs, fetch: _fetch, ...deps } = opts
  const listing = await listOrganizationMemories(opts)
  const listed = listing.memories.find((m) => m.id === memoryId)
  if (!listed) throw new MemoryError('not_found', `memory "${String(memoryId).slice(0, 80)}" is not visible to organization ${listing.org.id}`, { memoryId, orgId: listing.org.id })
  const here = (await listMemories(deps)).some((m) => m.id === memoryId)
  const memory = here
    ? await Memory.open(memoryId, deps)
    : await Memory.create({ ...deps, id: memoryId, name: listed.name, visibility: 'organization', orgId: listing.org.id })
  try {
    const sync = await memory.sync({ serverUrl, token: credential.trim(), ...(WebSocketPolyfill ? { WebSocketPolyfill } : {}), crossTab: crossTab ?? true })
    const connection = await memory.connect({ agent: listing.member.name, tier: 'read', localOnly: true })
    sync.client!.on('status', (s) => {
      if (s.state === 'denied' && s.closed && CUT_OFF.has(s.closed.code)) void memory.revoke(connection.id).catch(() => undefined)
    })
    await sync.client!.whenSynced(timeoutMs ?? 10_000)
    await sync.settled()
    return { memory, connection, listing }
  } catch (err) {
    await memory.close()
    throw err
  }
}
