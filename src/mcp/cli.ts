// `npm run mcp` serves a memory over stdio (default) or, with `--http HOST:PORT`, over Streamable
// HTTP; `--dir PATH` keeps its observations across restarts, or `--server ws://… --memory ID
// --sync-token T` makes it a replica of a memory on a sync server (shared with the app). A connection is minted at start for
// `--agent`/`--tier`; its token goes to stderr, never stdout, which belongs to the stdio transport.
import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { isTier } from '../core/access'
import { DEFAULT_TIER } from '../core/access'
import { localMemoryProvider, syncedMemoryProvider } from './provider'
import { createMcpServer, startHttpMcpServer } from './server'

const USAGE = 'usage: npm run mcp -- [--http 127.0.0.1:PORT] [--agent NAME] [--tier read|read_write|full] [--name MEMORY_NAME] [--dir PATH | --server ws://HOST:PORT --memory ID --sync-token TOKEN]'

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`)
  process.exit(2)
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { http: { type: 'string' }, agent: { type: 'string', default: 'mcp-agent' }, tier: { type: 'string', default: DEFAULT_TIER }, name: { type: 'string' }, dir: { type: 'string' }, server: { type: 'string' }, memory: { type: 'string' }, 'sync-token': { type: 'string' }, help: { type: 'boolean' } },
  })
  if (values.help) return void process.stderr.write(`${USAGE}\n`)
  if (!isTier(values.tier)) fail(`--tier must be read, read_write or full, not "${values.tier}"`)
  if (values.server && (!values.memory || !values['sync-token'])) fail('--server needs --memory and --sync-token')
  const provider = values.server
    ? syncedMemoryProvider({ serverUrl: values.server, memoryId: values.memory!, syncToken: values['sync-token']!, ...(values.name ? { name: values.name } : {}) })
    : localMemoryProvider({ ...(values.name ? { name: values.name } : {}), ...(values.dir ? { dir: values.dir } : {}) })
  const memory = await provider.memory()
  const conn = await memory.connect({ agent: values.agent, tier: values.tier })
  const shutdown = async (): Promise<void> => {
    await provider.close().catch(() => undefined)
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown())
  process.once('SIGTERM', () => void shutdown())

  if (values.http === undefined) {
    await createMcpServer(conn).connect(new StdioServerTransport())
    process.stdin.once('end', () => void shutdown())
    process.stderr.write(`cairn mcp: stdio, memory ${memory.info.id}, agent ${conn.agent} (${conn.tier})\n`)
    return
  }
  const m = /^(127\.0\.0\.1|localhost):(\d{1,5})$/.exec(values.http)
  if (!m) fail('--http takes a loopback HOST:PORT such as 127.0.0.1:8765')
  const server = await startHttpMcpServer({ provider, host: "127.0.0.1", port: Number(m[2]) })
  process.stderr.write(`cairn mcp: ${server.url}\ntoken (${conn.tier}, shown once): ${conn.token}\n`)
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)))
