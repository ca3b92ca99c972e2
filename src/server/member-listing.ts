// The HTTP route of an organization's listing: a member sees the memories visible to the
// organization and accepted into its listing, never a private one; a member with the right to
// publish adds a memory it owns (POST, in member-publish.ts).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readVisibility, visibleTo } from '../sync/visibility'
import type { Authorize } from './auth-result'
import type { SyncLog } from './log'
import { LISTING_HEADERS, publishForMember, requestingMember } from './member-publish'
import type { OrgMemoryIndex, OrgSource } from './org-store'
import type { Rooms } from './rooms'

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void

/**
 * GET /org/memories with `Authorization: Bearer <member credential>`: the organization, the
 * member, and the memories visible to the organization and accepted into its listing (ids,
 * names and who published each). Open to any origin: the credential travels in a header,
 * never in a cookie. Without organizations (`orgs` undefined) it answers 404.
 */
export function memberListing(orgs: OrgSource | undefined, orgMemories: OrgMemoryIndex | undefined, rooms: Rooms, authorize: Authorize, log: SyncLog): RouteHandler {
  return (req, res) => {
    const reply = (status: number, body: unknown) => void res.writeHead(status, LISTING_HEADERS).end(JSON.stringify(body))
    if (req.method === 'OPTIONS') return void res.writeHead(204, LISTING_HEADERS).end()
    if (req.method !== 'GET' && req.method !== 'POST') return reply(405, { code: 'invalid_request', message: 'use GET (or POST to publish)' })
    if (!orgs || !orgMemories) return reply(404, { code: 'not_found', message: 'this server keeps no organizations' })
    if (req.method === 'POST') {
      publishForMember(req, res, orgs, authorize, rooms).catch((err: unknown) => {
        log('error', 'publish_failed', { error: (err as Error).message })
        if (!res.headersSent) reply(500, { code: 'internal', message: 'the memory could not be published; try again' })
      })
      return
    }
    listFor(req, orgs, orgMemories, rooms).then(({ status, body }) => reply(status, body), (err: unknown) => {
      log('error', 'listing_failed', { error: (err as Error).message })
      if (!res.headersSent) reply(503, { code: 'unavailable', message: 'the organization listing is unavailable; try again later' })
    })
  }
}

async function listFor(req: IncomingMessage, orgs: OrgSource, orgMemories: OrgMemoryIndex, rooms: Rooms): Promise<{ status: number; body: unknown }> {
  const asked = await requestingMember(req, orgs)
  if (!asked.ok) return { status: asked.status, body: asked.body }
  const { org, member } = asked.found
  orgs.catchUp()
  const memories = (await orgMemories.of(org.id)).filter(({ id }) => {
    // only what the organization accepted: naming it in a visibility is open to any owner
    if (!orgs.accepts(org.id, id)) return false
    // a loaded room answers from its document, which is never behind the index
    const live = rooms.live(id)
    return !live || visibleTo(readVisibility(live), org.id)
  })
  return { status: 200, body: { org: { id: org.id, name: org.name }, member: { id: member.id, kind: member.kind, name: member.name }, memories } }
}
