// The HTTP route through which a memory's owner who is a member with the right to publish puts
// the memory into its organization's listing: the organization's consent given by its member,
// without an administrator of the server.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ROOM_NAME } from '../core/identifiers'
import { visibleTo } from '../sync/visibility'
import type { Authorize } from './auth-result'
import type { MemberOf } from './org-registry'
import type { OrgSource } from './org-store'
import type { Rooms } from './rooms'

/** A request body is a memory id and a token: a few hundred bytes. */
const MAX_BODY_BYTES = 4096

export const LISTING_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'GET, POST, OPTIONS', 'cache-control': 'no-store' }

/** The live member a request's Bearer credential names, or the refusal to send. */
export async function requestingMember(req: IncomingMessage, orgs: OrgSource): Promise<{ ok: true; found: MemberOf } | { ok: false; status: number; body: { code: string; message: string } }> {
  const credential = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
  const found = credential ? await orgs.lookup(credential) : null
  if (!found) return { ok: false, status: 401, body: { code: 'unauthorized', message: 'send a member credential as the Bearer token' } }
  if (found.member.removedAt !== null) return { ok: false, status: 403, body: { code: 'member_removed', message: 'this member was removed from the organization' } }
  return { ok: true, found }
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength
    if (size > MAX_BODY_BYTES) return null
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * POST /org/memories with `Authorization: Bearer <member credential>` and a JSON body
 * `{ "memoryId": "...", "token": "<a full connection token of that memory>" }`: the token
 * proves the member owns the memory, the member must hold the right to publish, and the memory
 * must be visible to the organization already (its owner decides that in the memory). Then the
 * memory joins the listing, accepted by that member.
 */
export async function publishForMember(req: IncomingMessage, res: ServerResponse, orgs: OrgSource, authorize: Authorize, rooms: Rooms): Promise<void> {
  const reply = (status: number, body: unknown) => void res.writeHead(status, LISTING_HEADERS).end(JSON.stringify(body))
  const text = await readBody(req)
  if (text === null) return reply(413, { code: 'invalid_request', message: `the body is larger than ${MAX_BODY_BYTES} bytes` })
  const asked = await requestingMember(req, orgs)
  if (!asked.ok) return reply(asked.status, asked.body)
  const { org, member } = asked.found
  if (member.mayPublish !== true) return reply(403, { code: 'forbidden', message: 'this member may not publish into the listing; an administrator of the server accepts memories (`cairn org accept`) or adds a member with --publish' })
  let body: { memoryId?: unknown; token?: unknown }
  try {
    body = JSON.parse(text) as typeof body
  } catch {
    return reply(400, { code: 'invalid_request', message: 'the body must be JSON: { "memoryId": "...", "token": "..." }' })
  }
  const { memoryId, token } = body ?? {}
  if (typeof memoryId !== 'string' || !ROOM_NAME.test(memoryId) || typeof token !== 'string') {
    return reply(400, { code: 'invalid_request', message: 'the body must name a memory id and carry a connection token of that memory: { "memoryId": "...", "token": "..." }' })
  }
  // the memory's owner: a `full` connection of that very memory, not a member's credential
  const auth = await authorize(token, memoryId)
  if (!auth.ok || auth.member || auth.connection.tier !== 'full' || auth.connection.memoryId !== memoryId) {
    return reply(403, { code: 'not_owner', message: 'the token is not a full connection of this memory: only its owner publishes it' })
  }
  const { visibility } = await rooms.access(memoryId)
  if (!visibleTo(visibility, org.id)) return reply(409, { code: 'not_visible', message: 'make the memory visible to the organization first (its owner sets that in the memory), then publish it' })
  const listed = await orgs.accept(org.id, memoryId, member.id)
  reply(200, { org: { id: org.id, name: org.name }, listed })
}
