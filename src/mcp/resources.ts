// MCP resources: every observation and entity of the memory under a URI a client can list,
// attach and read. Reads go through the session's connection, so its tier still applies.
import { McpError, ErrorCode, type Resource } from '@modelcontextprotocol/sdk/types.js'
import { isMemoryError } from '../core/errors'
import type { Connection } from '../engine/connection'
import type { Memory } from '../engine/memory-handle'
import { ownerOf } from '../engine/owner-door'

export const OBSERVATION_URI = 'cairn://observation/'
export const ENTITY_URI = 'cairn://entity/'
const PAGE = 200

export const RESOURCE_TEMPLATES = [
  { uriTemplate: `${OBSERVATION_URI}{slug}`, name: 'observation', title: 'An observation by slug', description: 'One observation in full: content, entities, relationships and files, as JSON.', mimeType: 'application/json' },
  { uriTemplate: `${ENTITY_URI}{name}`, name: 'entity', title: 'An entity by name', description: 'One entity: description, relationships both ways, the observations that name it and merged variant names, as JSON.', mimeType: 'application/json' },
]

/** One page of resources: observations newest first, then entities by name; the cursor is an offset. */
export async function listResources(memory: Memory, cursor: string | undefined): Promise<{ resources: Resource[]; nextCursor?: string }> {
  await ownerOf(memory).notesHeld()
  const graph = ownerOf(memory).committed
  const offset = cursor === undefined ? 0 : Number(cursor)
  if (!Number.isInteger(offset) || offset < 0) throw new McpError(ErrorCode.InvalidParams, `cursor "${cursor}" is not one this server gave`)
  const observations = [...graph.allObservations()].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0))
  const entities = [...graph.entities.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const all = observations.length + entities.length
  const resources: Resource[] = []
  for (let i = offset; i < Math.min(all, offset + PAGE); i++) {
    if (i < observations.length) {
      const o = observations[i]!
      resources.push({ uri: `${OBSERVATION_URI}${encodeURIComponent(o.slug)}`, name: o.slug, title: o.title, mimeType: 'application/json', description: o.content.slice(0, 160) })
    } else {
      const e = entities[i - observations.length]!
      resources.push({ uri: `${ENTITY_URI}${encodeURIComponent(e.name)}`, name: e.name, title: `${e.name} (${e.type})`, mimeType: 'application/json', description: e.description.slice(0, 160) })
    }
  }
  return offset + PAGE < all ? { resources, nextCursor: String(offset + PAGE) } : { resources }
}

export async function readResource(conn: Connection, uri: string): Promise<{ contents: Array<{ uri: string; mimeType: string; text: string }> }> {
  let body: unknown
  try {
    if (uri.startsWith(OBSERVATION_URI)) body = await conn.getObservation(decodeURIComponent(uri.slice(OBSERVATION_URI.length)))
    else if (uri.startsWith(ENTITY_URI)) body = await conn.inspect(decodeURIComponent(uri.slice(ENTITY_URI.length)))
    else throw new McpError(ErrorCode.InvalidParams, `unknown resource "${uri}"; Cairn serves ${OBSERVATION_URI}{slug} and ${ENTITY_URI}{name}`)
  } catch (e) {
    if (isMemoryError(e)) throw new McpError(e.code === 'not_found' ? -32002 : ErrorCode.InvalidParams, e.message, { code: e.code, details: e.details })
    throw e
  }
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] }
}
