// The MCP HTTP endpoint against a caller without a valid token, a page of another origin, and
// a session left idle, and one token opening session after session (2,000 initializes held
// +103 MiB). The promise: no body is read before the token is known, other origins are
// refused, an idle session does not stay open for good, and a token keeps a bounded number.
import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { localMemoryProvider } from '../../src/mcp/provider'
import { startHttpMcpServer } from '../../src/mcp/server'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
})

async function start(sessionIdleMs?: number, sessionsPerToken?: number) {
  const provider = localMemoryProvider()
  const server = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0, ...(sessionIdleMs ? { sessionIdleMs } : {}), ...(sessionsPerToken ? { sessionsPerToken } : {}) })
  cleanup.push(() => provider.close(), () => server.close())
  const conn = await (await provider.memory()).connect({ agent: 'agent', tier: 'read' })
  return { server, token: conn.token! }
}

/** Sends headers announcing `length` body bytes but only a few of them; resolves with the status if the server answers anyway. */
function answerBeforeBody(url: string, headers: Record<string, string>, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(length), ...headers } }, (res) => {
      resolve(res.statusCode ?? 0)
      res.resume()
      req.destroy()
    })
    req.on('error', () => undefined)
    req.write('{"jsonrpc":')
    setTimeout(() => {
      req.destroy()
      reject(new Error('the server waited for the body'))
    }, 3_000)
  })
}

describe('MCP over HTTP', () => {
  it('refuses an unknown token before reading the 8 MiB body it announces', async () => {
    const { server } = await start()
    expect(await answerBeforeBody(server.url, { authorization: 'Bearer cairn_not-a-token' }, 8 * 1024 * 1024)).toBe(403)
  })

  it('refuses a request from a page of another origin, even with a valid token', async () => {
    const { server, token } = await start()
    const res = await fetch(server.url, { method: 'POST', headers: { authorization: `Bearer ${token}`, origin: 'http://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } } }) })
    expect(res.status).toBe(403)
  })

  it('closes a session left idle, and says so to its next request', { timeout: 15_000 }, async () => {
    const { server, token } = await start(1_500)
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
    const client = new Client({ name: 'idle', version: '0' })
    cleanup.push(() => client.close())
    await client.connect(transport)
    await client.listTools()
    // just past the idle time: the request itself finds the session idle, without waiting for a sweep
    await new Promise((r) => setTimeout(r, 1_600))
    await expect(client.listTools()).rejects.toThrow(/404|session/i)
  })

  it('keeps a bounded number of sessions per token: past it, the least recently used close', { timeout: 20_000 }, async () => {
    const { server, token } = await start(undefined, 3)
    const clients: Client[] = []
    for (let i = 0; i < 5; i++) {
      const client = new Client({ name: `agent-${i}`, version: '0' })
      cleanup.push(() => client.close())
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
      clients.push(client)
    }
    for (const client of clients.slice(0, 2)) await expect(client.listTools()).rejects.toThrow(/404|session/i)
    for (const client of clients.slice(2)) expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })
})
