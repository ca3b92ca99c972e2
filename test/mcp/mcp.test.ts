import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { localMemoryProvider, type MemoryProvider } from '../../src/mcp/provider'
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/server'
import { agentSession, call } from './session'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
})

function client(): Client {
  const c = new Client({ name: 'cairn-test', version: '0.0.0' })
  cleanup.push(() => c.close())
  return c
}

async function http(): Promise<{ server: HttpMcpServer; provider: MemoryProvider }> {
  const provider = localMemoryProvider()
  const server = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
  cleanup.push(() => provider.close(), () => server.close())
  return { server, provider }
}

function httpTransport(url: string, token: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
}

describe('MCP server', () => {
  it('runs an agent session over stdio (npm run mcp)', async () => {
    const c = client()
    await c.connect(new StdioClientTransport({ command: 'npx', args: ['tsx', 'src/mcp/cli.ts', '--ephemeral', '--bm25', '--tier', 'full', '--agent', 'stdio-test'], cwd: process.cwd(), env: getDefaultEnvironment(), stderr: 'pipe' }))
    expect(c.getServerVersion()?.name).toBe('cairn')
    await agentSession(c)
  }, 30_000)

  it('runs an agent session over Streamable HTTP on 127.0.0.1', async () => {
    const { server, provider } = await http()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const conn = await (await provider.memory()).connect({ agent: 'http-test', tier: 'full' })
    const c = client()
    await c.connect(httpTransport(server.url, conn.token!))
    await agentSession(c)
  }, 30_000)

  it('binds each HTTP session to its token: tier holds, bad tokens are refused', async () => {
    const { server, provider } = await http()
    const memory = await provider.memory()
    const reader = await memory.connect({ agent: 'reader', tier: 'read' })
    const c = client()
    await c.connect(httpTransport(server.url, reader.token!))
    const w = await call(c, 'write', { title: 't', content: 'c' })
    expect(w.isError).toBe(true)
    expect(w.body.error.code).toBe('forbidden')
    expect((await call(c, 'recall', {})).isError).toBe(false)

    await expect(client().connect(httpTransport(server.url, 'not-a-token'))).rejects.toThrow()
    const res = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(res.status).toBe(401)
  }, 30_000)
})

describe('MCP over HTTP, hostile requests', () => {
  it('refuses a foreign Host header even with a valid token', async () => {
    const { server, provider } = await http()
    const conn = await (await provider.memory()).connect({ agent: 'x', tier: 'read' })
    const { request } = await import('node:http')
    const url = new URL(server.url)
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { host: 'evil.example:80', authorization: `Bearer ${conn.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end(body)
    })
    expect(status).toBe(403)
  })
})
