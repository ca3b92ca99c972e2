// The MCP face of a memory. Each session is bound to one connection, so the tier of the token
// that opened it decides what every tool call in it may do.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, isInitializeRequest, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { isMemoryError } from '../core/errors'
import type { Connection } from '../engine/connection'
import { BM25_ONLY, type Memory } from '../engine/memory-handle'
import { toolListing } from '../tools/definitions'
import { dispatchTool } from '../tools/dispatch'
import { toolAnnotations } from './annotations'
import type { MemoryProvider } from './provider'
import { listResources, readResource, RESOURCE_TEMPLATES } from './resources'

export const SERVER_INFO = { name: 'cairn', version: '0.1.0' }

const INSTRUCTIONS =
  'Cairn is a graph memory. Use recall before answering from memory and write after learning something worth keeping: short observations whose entities carry descriptions and are joined by relationships. Errors come back as JSON { code, message, details } with isError set; fix the named fields and retry.'

/** What the agent is told of how this memory ranks: plainly, when by words alone. */
function rankingNote(memory: Memory | undefined): string {
  const embedder = memory?.info.retrieval.embedder
  if (!embedder) return ''
  return embedder === BM25_ONLY
    ? ' This memory ranks by words alone (no embedding model): recall finds what shares words with the query, not what means the same in other words; try the words the notes would use.'
    : ` This memory ranks by words and by meaning (${embedder}).`
}

/**
 * An MCP server whose every tool call and resource read runs through `conn`. With `memory` (the
 * memory `conn` belongs to) it also lists the memory's observations and entities as resources.
 */
export function createMcpServer(conn: Connection, memory?: Memory): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS + rankingNote(memory) })
  const tools = toolListing().map((t) => ({ ...t, annotations: toolAnnotations(t.name) }))
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const outcome = await dispatchTool(conn, req.params.name, req.params.arguments ?? {})
    const body = outcome.ok ? outcome.result : { error: outcome.error }
    return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], isError: !outcome.ok }
  })
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }))
  server.setRequestHandler(ListResourcesRequestSchema, (req) => (memory ? listResources(memory, req.params?.cursor) : { resources: [] }))
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(conn, req.params.uri))
  return server
}

export interface HttpMcpServer {
  url: string
  close(): Promise<void>
}

function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization
  return h?.startsWith('Bearer ') ? h.slice('Bearer '.length).trim() : undefined
}

function reply(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, data: { code } }, id: null }))
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > 8 * 1024 * 1024) throw new Error('request body is over 8 MiB')
    chunks.push(chunk as Buffer)
  }
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest()

/** Equal-length digests compared in constant time, so a wrong token's timing says nothing about the right one. */
function sameToken(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** A session closes after this long without a request, unless the server is told otherwise. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000

/**
 * Sessions one token keeps open at once: an agent runs a few; each holds a transport and a
 * server, so without a bound one token could fill the process's memory with initializes.
 */
export const DEFAULT_SESSIONS_PER_TOKEN = 16

/**
 * Streamable HTTP on one path (`/mcp`). A session starts with an initialize request carrying
 * `Authorization: Bearer <connection token>`; later requests must carry the same token. The
 * token is checked before any body is read, a request from a browser page of another origin
 * is refused, a session idle for `sessionIdleMs` is closed, and a token keeps at most
 * `sessionsPerToken` sessions (its least recently used close first).
 */
export async function startHttpMcpServer(opts: { provider: MemoryProvider; host?: string; port?: number; sessionIdleMs?: number; sessionsPerToken?: number }): Promise<HttpMcpServer> {
  const host = opts.host ?? '127.0.0.1'
  const idleMs = opts.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  const perToken = opts.sessionsPerToken ?? DEFAULT_SESSIONS_PER_TOKEN
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; tokenDigest: Buffer; lastSeen: number }>()
  // Set once the port is known; a page on another origin must not reach a loopback server by rebinding DNS.
  let allowedHosts: string[] = []
  let allowedOrigins: string[] = []

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return reply(res, 404, 'not_found', 'the MCP endpoint is /mcp')
    // Agents send no Origin; a browser always does, and only this server's own pages may call it.
    const origin = req.headers.origin
    if (origin !== undefined && !allowedOrigins.includes(origin)) return reply(res, 403, 'forbidden', 'requests from other web origins are refused')
    const token = bearer(req)
    if (!token) return reply(res, 401, 'forbidden', 'send the connection token as Authorization: Bearer <token>')
    const tokenDigest = digest(token)
    const sessionId = req.headers['mcp-session-id']
    if (typeof sessionId === 'string') {
      const s = sessions.get(sessionId)
      // idle past its time is closed, whether or not the sweep has come by yet
      if (s && Date.now() - s.lastSeen >= idleMs) closeSession(sessionId, s)
      if (!s || !sessions.has(sessionId)) return reply(res, 404, 'not_found', 'unknown or closed session; initialize a new one')
      if (!sameToken(s.tokenDigest, tokenDigest)) return reply(res, 403, 'forbidden', 'this session belongs to another connection')
      s.lastSeen = Date.now()
      const body = req.method === 'POST' ? await readJson(req) : undefined
      return s.transport.handleRequest(req, res, body)
    }
    if (req.method !== 'POST') return reply(res, 400, 'invalid_request', 'start a session with an initialize request')
    let conn: Connection
    let memory: Memory
    try {
      memory = await opts.provider.memory()
      conn = opts.provider.connect ? await opts.provider.connect(token) : await memory.connectWithToken(token)
    } catch (e) {
      return reply(res, 403, isMemoryError(e) ? e.code : 'forbidden', e instanceof Error ? e.message : 'token refused')
    }
    const body = await readJson(req)
    if (!isInitializeRequest(body)) return reply(res, 400, 'invalid_request', 'start a session with an initialize request')
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, tokenDigest, lastSeen: Date.now() })
        // past the bound, the token's least recently used sessions close (a restarted agent's
        // abandoned ones first); its next request there is told to initialize again
        const mine = [...sessions].filter(([, other]) => sameToken(other.tokenDigest, tokenDigest)).sort(([, a], [, b]) => a.lastSeen - b.lastSeen)
        for (const [oldId, old] of mine.slice(0, Math.max(0, mine.length - perToken))) closeSession(oldId, old)
      },
    })
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId)
    }
    await createMcpServer(conn, memory).connect(transport)
    await transport.handleRequest(req, res, body)
  }

  function closeSession(id: string, s: { transport: StreamableHTTPServerTransport }): void {
    sessions.delete(id)
    void s.transport.close().catch(() => undefined)
  }

  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [id, s] of sessions) {
      if (now - s.lastSeen < idleMs) continue
      closeSession(id, s)
    }
  }, Math.max(50, Math.min(60_000, Math.floor(idleMs / 4))))
  sweep.unref()

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) reply(res, 400, 'invalid_request', e instanceof Error ? e.message : String(e))
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(opts.port ?? 0, host, () => resolve())
  })
  const { port } = http.address() as AddressInfo
  allowedHosts = [`${host}:${port}`, `localhost:${port}`]
  allowedOrigins = allowedHosts.map((h) => `http://${h}`)
  return {
    url: `http://${host}:${port}/mcp`,
    async close() {
      clearInterval(sweep)
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)))
      sessions.clear()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
